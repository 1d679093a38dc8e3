#include "sim/engine/memory_accounting.h"

#include <algorithm>

namespace bubblesim {

MemoryAccounting::MemoryAccounting(const OpGraph& graph, ReleaseConvention release,
                                   std::vector<Bytes> budget, std::optional<Bytes> host_capacity,
                                   HostLayout hosts, const std::vector<EngineObserver*>& observers)
    : graph_(graph),
      release_(release),
      budget_(std::move(budget)),
      host_capacity_(host_capacity),
      hosts_(std::move(hosts)),
      observers_(observers),
      microbatches_(static_cast<std::size_t>(graph.table().microbatches)) {
  const Table& table = graph.table();
  const auto devices = static_cast<std::size_t>(table.devices);
  activations_.assign(static_cast<std::size_t>(table.stages) * microbatches_, {});
  activation_now_.assign(devices, Bytes::zero());
  activation_peak_.assign(devices, Bytes::zero());
  activation_peak_time_.assign(devices, Time::zero());
  total_peak_time_.assign(devices, Time::zero());
  count_now_.assign(devices, 0);
  count_peak_.assign(devices, 0);
  oom_seen_.assign(devices, false);
  offloaded_.assign(devices, Bytes::zero());
  // Each distinct stage a device holds costs its static memory once (replicas on other devices
  // count there: weight replication).
  static_memory_.assign(devices, Bytes::zero());
  for (std::size_t d = 0; d < devices; ++d) {
    for (std::int32_t s : table.placement.stages_held_by(static_cast<std::int32_t>(d)))
      static_memory_[d] += graph.cost(s).static_memory;
  }
  total_peak_ = static_memory_;
  host_now_.assign(hosts_.names.size(), Bytes::zero());
  host_oom_seen_.assign(hosts_.names.size(), false);
}

void MemoryAccounting::notify(std::int32_t device, Time now) {
  auto d = static_cast<std::size_t>(device);
  for (EngineObserver* o : observers_)
    o->on_memory(device, now, activation_now_[d], activation_now_[d] + static_memory_[d]);
}

void MemoryAccounting::allocate(std::int32_t device, std::int32_t s, std::int32_t j, Bytes bytes,
                                Time now, const Op& op) {
  auto d = static_cast<std::size_t>(device);
  Activation& a = activation(s, j);
  a.resident += bytes;
  activation_now_[d] += bytes;
  if (!a.counted) {
    a.counted = true;
    if (++count_now_[d] > count_peak_[d]) count_peak_[d] = count_now_[d];
  }
  if (activation_now_[d] > activation_peak_[d]) {
    activation_peak_[d] = activation_now_[d];
    activation_peak_time_[d] = now;
  }
  Bytes total = activation_now_[d] + static_memory_[d];
  if (total > total_peak_[d]) {
    total_peak_[d] = total;
    total_peak_time_[d] = now;
  }
  if (!budget_.empty()) {
    Bytes budget = budget_[d];
    if (total > budget && !oom_seen_[d]) {
      oom_seen_[d] = true;
      oom_.push_back(OutOfMemory{.device = device,
                                 .host = {},
                                 .time = now,
                                 .op = to_string(op),
                                 .over = total - budget,
                                 .budget = budget});
    }
  }
  if (!observers_.empty()) notify(device, now);
}

void MemoryAccounting::release(std::int32_t device, std::int32_t s, std::int32_t j, Bytes bytes,
                               bool release_unit, Time now) {
  auto d = static_cast<std::size_t>(device);
  Activation& a = activation(s, j);
  Bytes freed = std::min(bytes, a.resident);
  a.resident -= freed;
  activation_now_[d] -= freed;
  if (release_unit && a.counted) {
    a.counted = false;
    --count_now_[d];
  }
  if (!observers_.empty()) notify(device, now);
}

Bytes MemoryAccounting::on_start(std::uint32_t n, Time now) {
  const Op& op = graph_.op(n);
  const std::int32_t device = graph_.device(n);
  switch (op.kind) {
    case OpKind::Forward:
    case OpKind::ForwardBackward: {
      const StageCost& c = graph_.cost(op.stage);
      allocate(device, op.stage, op.microbatch,
               graph_.has(n, OpGraph::kForwardRecomputed) ? c.stage_input : c.activation, now, op);
      return Bytes::zero();
    }
    case OpKind::Recompute:
      allocate(device, op.stage, op.microbatch, graph_.cost(op.stage).activation, now, op);
      return Bytes::zero();
    case OpKind::Reload: {
      if (copy_bytes_.empty()) copy_bytes_.resize(graph_.size());
      Activation& a = activation(op.stage, op.microbatch);
      const Bytes bytes = a.offloaded;
      copy_bytes_[n] = bytes;
      a.offloaded = Bytes::zero();
      allocate(device, op.stage, op.microbatch, bytes, now, op);
      return bytes;
    }
    case OpKind::Offload: {
      // Moves what is resident now (only the stage input when the activation is recomputed).
      if (copy_bytes_.empty()) copy_bytes_.resize(graph_.size());
      const auto d = static_cast<std::size_t>(device);
      const Bytes bytes = activation(op.stage, op.microbatch).resident;
      copy_bytes_[n] = bytes;
      offloaded_[d] += bytes;
      const std::size_t h = hosts_.host_of_device[d];
      host_now_[h] += bytes;
      if (host_capacity_ && host_now_[h] > *host_capacity_ && !host_oom_seen_[h]) {
        host_oom_seen_[h] = true;
        oom_.push_back(OutOfMemory{.device = device,
                                   .host = hosts_.names[h],
                                   .time = now,
                                   .op = to_string(op),
                                   .over = host_now_[h] - *host_capacity_,
                                   .budget = *host_capacity_});
      }
      return bytes;
    }
    default:
      return Bytes::zero();
  }
}

void MemoryAccounting::release_backward(std::uint32_t n, std::int32_t s, std::int32_t j, Time now) {
  const StageCost& c = graph_.cost(s);
  const std::int32_t device = graph_.device(n);
  Bytes input = graph_.has(n, OpGraph::kBackwardRecomputed) ? c.stage_input : Bytes::zero();
  if (!graph_.has(n, OpGraph::kBackwardSplit)) {
    release(device, s, j, c.activation + input, true, now);
  } else if (release_ == ReleaseConvention::Split) {
    release(device, s, j, c.activation - std::min(c.weight_grad, c.activation) + input, false, now);
  }
}

void MemoryAccounting::on_end(std::uint32_t n, Time now) {
  const Op& op = graph_.op(n);
  const std::int32_t device = graph_.device(n);
  switch (op.kind) {
    case OpKind::Backward:
      release_backward(n, op.stage, op.microbatch, now);
      break;
    case OpKind::ForwardBackward:
      release_backward(n, op.backward_stage, op.backward_microbatch, now);
      break;
    case OpKind::Weight:
      release(device, op.stage, op.microbatch, activation(op.stage, op.microbatch).resident, true,
              now);
      break;
    case OpKind::Offload:
      activation(op.stage, op.microbatch).offloaded += copy_bytes_[n];
      release(device, op.stage, op.microbatch, copy_bytes_[n], false, now);
      break;
    case OpKind::Reload:
      host_now_[hosts_.host_of_device[static_cast<std::size_t>(device)]] -= copy_bytes_[n];
      break;
    default:
      break;
  }
}

MemoryPeaks MemoryAccounting::peaks() const {
  MemoryPeaks peaks;
  peaks.activation = activation_peak_;
  peaks.activation_time = activation_peak_time_;
  peaks.total = total_peak_;
  peaks.activation_count = count_peak_;
  return peaks;
}

}  // namespace bubblesim
