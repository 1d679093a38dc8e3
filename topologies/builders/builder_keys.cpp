#include "topologies/builders/builder_keys.h"

#include <algorithm>
#include <vector>

namespace bubblesim {

LinkParams read_link_params(MapReader& parent, const std::string& key, LinkParams defaults,
                            DiagnosticList& d, bool with_bandwidth) {
  auto node = parent.get(key);
  if (!node) return defaults;
  std::vector<std::string> keys{"latency"};
  if (with_bandwidth) keys.insert(keys.begin(), "bandwidth");
  MapReader r(*node, d, keys);
  if (with_bandwidth) {
    if (auto bw = r.bandwidth("bandwidth")) defaults.bandwidth = *bw;
  }
  if (auto lat = r.time("latency")) defaults.latency = *lat;
  r.finish();
  return defaults;
}

void read_node_links(MapReader& reader, NodeParams& node, DiagnosticList& d) {
  node.nvlink = read_link_params(reader, "nvlink", node.nvlink, d);
  node.pcie = read_link_params(reader, "pcie", node.pcie, d);
  if (auto per = reader.get("gpus_per_pcie_switch")) {
    if (auto v = per->as_integer(d, 1, node.gpus))
      node.gpus_per_pcie_switch = static_cast<std::int32_t>(*v);
  } else {
    node.gpus_per_pcie_switch = std::min(node.gpus_per_pcie_switch, node.gpus);
  }
}

}  // namespace bubblesim
