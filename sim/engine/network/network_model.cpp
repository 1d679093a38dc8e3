#include "sim/engine/network/network_model.h"

#include <stdexcept>

#include "sim/engine/engine_input.h"
#include "sim/engine/network/fixed_delay.h"
#include "sim/engine/network/flow_network.h"

namespace bubblesim {

std::optional<Time> NetworkModel::copy(std::int32_t, CopyDirection, Bytes bytes, std::uint32_t,
                                       Time now) {
  if (offload_bandwidth_ && bytes > Bytes::zero())
    return now + transfer_time(bytes, *offload_bandwidth_);
  return now;
}

HostLayout NetworkModel::hosts(std::int32_t devices) const {
  return HostLayout{std::vector<std::size_t>(static_cast<std::size_t>(devices), 0), {"host"}};
}

std::unique_ptr<NetworkModel> make_network_model(const EngineInput& in) {
  if (const auto* topology = std::get_if<TopologyNetwork>(&in.network)) {
    return std::make_unique<FlowNetwork>(*topology, in.table->devices, in.link_faults,
                                         in.offload_bandwidth);
  }
  if (!in.link_faults.empty()) {
    throw std::invalid_argument("link faults need the topology network model");
  }
  if (const auto* fixed = std::get_if<FixedDelayNetwork>(&in.network)) {
    return std::make_unique<FixedDelay>(fixed->delay, in.offload_bandwidth);
  }
  return std::make_unique<NoCost>(in.offload_bandwidth);
}

}  // namespace bubblesim
