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
  activations_.assign(static_cast<std::size_t>(table.stages) * microbatches_, {});
  devices_ = devices_of(table, graph.stage_costs());
  oom_seen_.assign(devices_.size(), false);
  offloaded_.assign(devices_.size(), Bytes::zero());
  host_now_.assign(hosts_.names.size(), Bytes::zero());
  host_oom_seen_.assign(hosts_.names.size(), false);
}

void MemoryAccounting::notify(std::int32_t device, Time now) {
  const DeviceMemory& m = devices_[static_cast<std::size_t>(device)];
  for (EngineObserver* o : observers_) o->on_memory(device, now, m.resident, m.total());
}

void MemoryAccounting::allocate(std::int32_t device, std::int32_t s, std::int32_t j, Bytes bytes,
                                Time now, const Op& op) {
  auto d = static_cast<std::size_t>(device);
  Activation& a = activation(s, j);
  a.resident += bytes;
  DeviceMemory& m = devices_[d];
  m.allocate(bytes, !a.counted, now);
  a.counted = true;
  if (!budget_.empty()) {
    const Bytes budget = budget_[d];
    const Bytes total = m.total();
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
  Activation& a = activation(s, j);
  const Bytes freed = std::min(bytes, a.resident);
  a.resident -= freed;
  devices_[static_cast<std::size_t>(device)].release(freed, release_unit && a.counted);
  if (release_unit) a.counted = false;
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
               forward_allocation(c, graph_.has(n, OpGraph::kForwardRecomputed)), now, op);
      if (op.kind == OpKind::ForwardBackward)
        allocate_growth(n, op.backward_stage, op.backward_microbatch, now);
      return Bytes::zero();
    }
    case OpKind::Backward:
      allocate_growth(n, op.stage, op.microbatch, now);
      return Bytes::zero();
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

void MemoryAccounting::allocate_growth(std::uint32_t n, std::int32_t s, std::int32_t j, Time now) {
  const Bytes growth = backward_growth(graph_.cost(s), graph_.has(n, OpGraph::kBackwardSplit));
  if (growth > Bytes::zero()) allocate(graph_.device(n), s, j, growth, now, graph_.op(n));
}

void MemoryAccounting::release_backward(std::uint32_t n, std::int32_t s, std::int32_t j, Time now) {
  if (std::optional<BackwardRelease> r =
          backward_release(graph_.cost(s), graph_.has(n, OpGraph::kBackwardSplit),
                           graph_.has(n, OpGraph::kBackwardRecomputed), release_)) {
    release(graph_.device(n), s, j, r->bytes, r->unit, now);
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

}  // namespace bubblesim
