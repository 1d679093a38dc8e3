#include "sim/engine/network/network_model.h"

#include <stdexcept>

#include "sim/engine/duration_model.h"
#include "sim/engine/engine_input.h"
#include "sim/engine/network/fixed_delay.h"
#include "sim/engine/network/flow_network.h"

namespace bubblesim {

std::optional<Time> NetworkModel::copy(std::int32_t device, CopyDirection, Bytes bytes,
                                       std::uint32_t token, Time now) {
  if (offload_bandwidth_ && bytes > Bytes::zero())
    return now + copy_time(device, token, transfer_time(bytes, *offload_bandwidth_));
  return now;
}

void NetworkModel::set_jitter(const DurationModel* jitter, std::int32_t iteration) {
  jitter_ = jitter != nullptr && jitter->jitters_network() ? jitter : nullptr;
  iteration_ = iteration;
}

Time NetworkModel::transfer_delay(std::int32_t from, std::int32_t to, Time delay) const {
  if (jitter_ == nullptr) return delay;
  const double factor =
      jitter_->transfer_factor(from, to, next_producer_, next_consumer_, iteration_);
  return factor == 1.0 ? delay : scaled(delay, factor);
}

Time NetworkModel::copy_time(std::int32_t device, std::uint32_t node, Time time) const {
  if (jitter_ == nullptr) return time;
  const double factor = jitter_->copy_factor(device, node, iteration_);
  return factor == 1.0 ? time : scaled(time, factor);
}

HostLayout NetworkModel::hosts(std::int32_t devices) const {
  return HostLayout{std::vector<std::size_t>(static_cast<std::size_t>(devices), 0), {"host"}};
}

namespace {

/// How a topology replay solves its flows: by class where that is exact and pays, else one by
/// one, with the reason the report gives.
FlowSymmetry flow_symmetry(const EngineInput& in) {
  if (!in.sync) {
    return {"full",
            "no collective spans the replicas: each flow is its own class (the transfers, "
            "copies and all-to-alls of the replica the engine replays)"};
  }
  if (in.symmetry == SymmetryMode::Off) return {"full", "--symmetry off"};
  if (!in.link_faults.empty()) {
    return {"full",
            "a link fault changes one link mid-run, which would split a class in flight "
            "(faults:)"};
  }
  return {"symmetric",
          "the gradient collectives' flows over every replica solved one class at a time: "
          "the same rates as one by one"};
}

std::unique_ptr<NetworkModel> network_of(const EngineInput& in) {
  if (const auto* topology = std::get_if<TopologyNetwork>(&in.network)) {
    return std::make_unique<FlowNetwork>(*topology, in.table->devices, in.link_faults,
                                         in.offload_bandwidth, flow_symmetry(in));
  }
  if (!in.link_faults.empty()) {
    throw std::invalid_argument("link faults need the topology network model");
  }
  if (const auto* fixed = std::get_if<FixedDelayNetwork>(&in.network)) {
    return std::make_unique<FixedDelay>(fixed->delay, in.offload_bandwidth);
  }
  return std::make_unique<NoCost>(in.offload_bandwidth);
}

}  // namespace

std::unique_ptr<NetworkModel> make_network_model(const EngineInput& in) {
  std::unique_ptr<NetworkModel> model = network_of(in);
  model->set_jitter(in.durations.get());
  return model;
}

}  // namespace bubblesim
