#include "topologies/nccl/nccl_graph.h"

#include <algorithm>
#include <cmath>
#include <span>

namespace bubblesim::nccl {
namespace {

enum class Pattern { Ring, Tree, Nvls, CollNet };

/// topo.h:17 LOC_BW: a GPU alone (search.cc:43-46).
constexpr double kLocBw = 5000.0;

std::span<const double> speeds(Arch arch, bool inter) {
  if (arch == Arch::Blackwell)
    return inter ? std::span<const double>(kSpeedInterSm100)
                 : std::span<const double>(kSpeedIntraSm100);
  if (arch == Arch::Hopper)
    return inter ? std::span<const double>(kSpeedInterSm90)
                 : std::span<const double>(kSpeedIntraSm90);
  return inter ? std::span<const double>(kSpeedInter) : std::span<const double>(kSpeedIntra);
}

int floor_div(double a, double b) { return b > 0 ? static_cast<int>(std::floor(a / b + 1e-9)) : 0; }

/// The GPUs' link to each other: NVLink, else PCIe.
double gpu_link(const NodeView& v) { return v.nvlink_bw > 0 ? v.nvlink_bw : v.pci_bw; }

/// How many channels of `pattern` fit at speed `intra` inside the node and `inter` on the NICs
/// (search.cc: every channel takes its speed off each link it crosses, ncclTopoFollowPath).
int capacity(const NodeView& v, Pattern pattern, bool multi_node, double intra, double inter) {
  const int gpus = v.gpus;
  if (pattern == Pattern::Nvls) {
    // search.cc:410-443: every GPU's NVLink carries each channel once, its head's twice.
    if (!v.nvswitch || v.nvlink_bw <= 0) return 0;
    int heads = floor_div(v.nvlink_bw, intra) - 1;
    if (!multi_node) return std::min(heads, gpus);
    int nic_heads = 0;  // search.cc:748-770: one head per NIC, its own GPU
    for (const NodeView::Nic& n : v.nics)
      if (n.net_bw >= inter && n.path_bw >= inter) ++nic_heads;
    return std::min({heads, nic_heads, gpus});
  }
  if (!multi_node) {
    if (gpus <= 1) return kMaxChannels;
    return floor_div(gpu_link(v), intra);  // every GPU forwards every channel
  }
  int net = 0, pci = 0;
  for (const NodeView::Nic& n : v.nics) {
    if (pattern == Pattern::CollNet && !n.sharp) continue;
    net += floor_div(n.net_bw, inter);  // search.cc:744-751: the NIC's rate less each channel
    pci += floor_div(n.path_bw * n.gpus, inter);
  }
  int channels = std::min(net, pci);
  if (gpus > 1) {  // L - 1 hops of the node's chain per channel, spread over its GPUs
    channels = std::min(channels, floor_div(gpu_link(v) * gpus, (gpus - 1) * intra));
  }
  return channels;
}

struct Found {
  int channels = 0;
  double intra = 0, inter = 0;
};

bool better(Pattern pattern, const Found& g, const Found& ref, int gpus) {
  if (pattern == Pattern::Nvls)  // search.cc:450-455
    return (g.channels > ref.channels && g.channels <= gpus) ||
           g.channels * g.inter > ref.channels * ref.inter;
  return g.channels * g.intra > ref.channels * ref.intra;  // search.cc:457-461
}

/// ncclTopoCompute (search.cc:1074-1310) for one pattern, its speed dimension in closed form.
Graph search(const NodeView& v, Arch arch, Pattern pattern, bool multi_node, int min_channels,
             int max_channels) {
  const std::span<const double> speed = speeds(arch, multi_node);
  const auto last = static_cast<int>(speed.size()) - 1;
  // search.cc:39-53: maxBw (the best GPU-to-NIC or GPU-to-GPU path), totalBw (a GPU's links).
  double max_bw = 0, total_bw = std::max(v.nvlink_bw, v.pci_bw);
  if (!multi_node && v.gpus == 1) {
    max_bw = total_bw = kLocBw;
  } else if (multi_node) {
    for (const NodeView::Nic& n : v.nics) max_bw = std::max(max_bw, std::min(n.net_bw, n.path_bw));
  } else {
    max_bw = gpu_link(v);
  }
  if (v.gpus > 1 && pattern != Pattern::Ring) total_bw *= v.gpus / (v.gpus - 1.0);  // :1168
  int i = 0;
  while ((speed[static_cast<std::size_t>(i)] > max_bw ||
          speed[static_cast<std::size_t>(i)] * min_channels > total_bw) &&
         i < last)
    ++i;
  Found best;
  // Pass 1 (search.cc:1196-1253): the fastest speed with channels, then slower ones while they
  // could still beat it (down to .49 of its speed).
  while (true) {
    const double s = speed[static_cast<std::size_t>(i)];
    Found g{std::min(capacity(v, pattern, multi_node, s, s), max_channels), s, s};
    if (g.channels >= min_channels && g.channels > 0 && better(pattern, g, best, v.gpus)) best = g;
    if (best.channels > 0 &&
        (best.channels == max_channels || best.channels * best.inter >= total_bw))
      break;
    if (i < last &&
        (best.channels == 0 || speed[static_cast<std::size_t>(i) + 1] / best.inter > .49)) {
      ++i;
      continue;
    }
    break;
  }
  Graph out;
  if (best.channels == 0) return out;
  // search.cc:1036-1049 ncclTopoDupChannels (rings and trees).
  if (pattern != Pattern::Nvls && best.intra >= 25.0 &&
      !(arch >= Arch::Hopper && best.intra < 50.0 && best.channels > 4)) {
    const int dup = std::min(best.channels * 2, max_channels);
    const int div = (dup + best.channels - 1) / best.channels;
    best.intra /= div;
    best.inter /= div;
    best.channels = dup;
  }
  // Pass 2 (search.cc:1256-1285): raise the speeds the same channels still carry.
  i = 0;
  while (speed[static_cast<std::size_t>(i)] > best.inter && i < last) ++i;
  while (i > 0) {
    const double s = speed[static_cast<std::size_t>(i) - 1];
    if (pattern == Pattern::Ring) {
      if (capacity(v, pattern, multi_node, s, s) < best.channels) break;
      best.intra = best.inter = s;
    } else if (pattern == Pattern::Nvls) {
      if (!(best.inter < best.intra * 2) ||
          capacity(v, pattern, multi_node, best.intra, s) < best.channels)
        break;
      best.inter = s;
    } else {
      if (!(best.intra < best.inter * 2) ||
          capacity(v, pattern, multi_node, s, best.inter) < best.channels)
        break;
      best.intra = s;
    }
    --i;
  }
  out.channels = best.channels;
  out.bw_intra = best.intra;
  out.bw_inter = best.inter;
  // A GPU alone on its node has no intra-node path (typeIntra PATH_LOC, which LL128 allows).
  out.nvlink = v.gpus == 1 || v.nvlink_bw > 0;
  out.net_pxn = v.nic_pxn;
  return out;
}

}  // namespace

Comm communicator(const NodeView& node, Arch arch, std::int32_t ranks, std::int32_t nodes) {
  Comm c;
  c.arch = arch;
  c.ranks = ranks;
  c.nodes = nodes;
  c.nvswitch = node.nvswitch;
  const bool multi = nodes > 1;
  // init.cc:1174-1220: ring (1 to MAXCHANNELS/2 channels), tree (the ring's count), CollNet and
  // NVLS; graphs[] of the tuning: tree, ring, CollNet Direct, CollNet Chain, NVLS, NVLS (for NVLS
  // Tree) and the tree's again (for PAT), init.cc:980-981.
  const Graph ring = search(node, arch, Pattern::Ring, multi, 1, kMaxChannels / 2);
  Graph tree = search(node, arch, Pattern::Tree, multi, ring.channels, ring.channels);
  if (tree.channels == 0) tree = ring;
  Graph nvls;
  // transport/nvls.cc ncclNvlsInit: NVLink SHARP on Hopper and later, on an NVSwitch, 2+ GPUs.
  if (arch >= Arch::Hopper && node.nvswitch && node.gpus >= 2) {
    const int heads = std::min(kMaxNvlsArity, node.gpus);
    nvls = search(node, arch, Pattern::Nvls, multi, multi ? 1 : heads, heads);
  }
  Graph collnet;
  if (multi && std::any_of(node.nics.begin(), node.nics.end(),
                           [](const NodeView::Nic& n) { return n.sharp; }))
    collnet = search(node, arch, Pattern::CollNet, multi, ring.channels, ring.channels);
  c.graphs[static_cast<std::size_t>(Algo::Tree)] = tree;
  c.graphs[static_cast<std::size_t>(Algo::Ring)] = ring;
  c.graphs[static_cast<std::size_t>(Algo::CollNetDirect)] = collnet;
  c.graphs[static_cast<std::size_t>(Algo::CollNetChain)] = collnet;
  c.graphs[static_cast<std::size_t>(Algo::Nvls)] = nvls;
  c.graphs[static_cast<std::size_t>(Algo::NvlsTree)] = nvls;
  c.graphs[static_cast<std::size_t>(Algo::Pat)] = tree;
  c.nvls = nvls.channels > 0;
  c.collnet = collnet.channels > 0;
  c.channels = std::max(1, std::min(ring.channels, tree.channels));  // init.cc:1459
  return c;
}

NodeReader::NodeReader(const Topology& topology, Arch arch, double nic_scale)
    : topology_(&topology),
      arch_(arch),
      nic_scale_(nic_scale > 0 ? nic_scale : 1.0),
      out_(static_cast<std::size_t>(topology.vertex_count())) {
  for (LinkId l = 0; l < topology.link_count(); ++l)
    out_[static_cast<std::size_t>(topology.link_source(l))].push_back(l);
}

double NodeReader::raw_bw(LinkId l) const {
  const double bw = topology_->link_bandwidth(l).bytes_per_second() / 1e9;
  const bool nic = topology_->vertex_kind(topology_->link_source(l)) == VertexKind::Nic ||
                   topology_->vertex_kind(topology_->link_target(l)) == VertexKind::Nic;
  return nic ? bw / nic_scale_ : bw;
}

double NodeReader::link_bw(LinkId l) const {
  const double bw = raw_bw(l);
  const auto pci = [&](VertexId v) {
    const VertexKind k = topology_->vertex_kind(v);
    return k == VertexKind::PcieSwitch || k == VertexKind::Host;
  };
  return pci(topology_->link_source(l)) || pci(topology_->link_target(l)) ? bw * kNcclPciShare : bw;
}

NodeView NodeReader::read(const std::vector<VertexId>& gpus) const {
  NodeView v;
  v.gpus = static_cast<std::int32_t>(gpus.size());
  const auto a = static_cast<std::size_t>(arch_);
  double nvlink = -1, pci = -1;
  std::vector<VertexId> nics;
  for (VertexId g : gpus) {
    double nv = 0, pc = 0;
    for (LinkId l : out_[static_cast<std::size_t>(g)]) {
      const VertexKind k = topology_->vertex_kind(topology_->link_target(l));
      const double bw = raw_bw(l);
      if (k == VertexKind::Gpu || k == VertexKind::Switch) {
        nv += bw * kNcclNvLinkBw[a] / kDatasheetNvLinkBw[a];  // NCCL's count of these NVLinks
        if (k == VertexKind::Switch) v.nvswitch = true;
      } else if (k == VertexKind::PcieSwitch || k == VertexKind::Host) {
        pc = std::max(pc, bw * kNcclPciShare);
      }
    }
    nvlink = nvlink < 0 ? nv : std::min(nvlink, nv);
    pci = pci < 0 ? pc : std::min(pci, pc);
    std::optional<VertexId> nic = topology_->nic_of(g);
    if (!nic) {
      // No NIC in the topology (a general form wiring GPUs to each other or to a switch): the
      // GPU's fastest link is its way out, as one NIC of that rate.
      NodeView::Nic n;
      for (LinkId l : out_[static_cast<std::size_t>(g)]) n.net_bw = std::max(n.net_bw, raw_bw(l));
      n.path_bw = n.net_bw;
      v.nics.push_back(n);
      nics.push_back(g);
      continue;
    }
    auto it = std::find(nics.begin(), nics.end(), *nic);
    if (it != nics.end()) {
      ++v.nics[static_cast<std::size_t>(it - nics.begin())].gpus;
      continue;
    }
    nics.push_back(*nic);
    NodeView::Nic n;
    for (LinkId l : out_[static_cast<std::size_t>(*nic)]) {
      const VertexKind k = topology_->vertex_kind(topology_->link_target(l));
      if (k != VertexKind::PcieSwitch && k != VertexKind::Host && k != VertexKind::Gpu) {
        n.net_bw = std::max(n.net_bw, raw_bw(l));
        if (k == VertexKind::Switch && topology_->sharp(topology_->link_target(l))) n.sharp = true;
      }
    }
    n.path_bw = n.net_bw;
    if (std::optional<Route> r = topology_->route(g, *nic)) {
      for (LinkId l : r->links) {
        n.path_bw = std::min(n.path_bw, link_bw(l));
        if (topology_->vertex_kind(topology_->link_target(l)) == VertexKind::Host)
          v.nic_pxn = false;  // through the CPU: PHB or SYS
      }
    }
    v.nics.push_back(n);
  }
  v.nvlink_bw = std::max(nvlink, 0.0);
  v.pci_bw = std::max(pci, 0.0);
  return v;
}

NodeView NodeReader::slowest(const std::vector<NodeView>& views) {
  NodeView out = views.front();
  for (const NodeView& v : views) {
    out.gpus = std::max(out.gpus, v.gpus);
    out.nvlink_bw = std::min(out.nvlink_bw, v.nvlink_bw);
    out.nvswitch = out.nvswitch && v.nvswitch;
    out.pci_bw = std::min(out.pci_bw, v.pci_bw);
    out.nic_pxn = out.nic_pxn && v.nic_pxn;
    if (v.nics.size() < out.nics.size()) out.nics.resize(v.nics.size());
    for (std::size_t i = 0; i < out.nics.size(); ++i) {
      out.nics[i].net_bw = std::min(out.nics[i].net_bw, v.nics[i].net_bw);
      out.nics[i].path_bw = std::min(out.nics[i].path_bw, v.nics[i].path_bw);
      out.nics[i].sharp = out.nics[i].sharp && v.nics[i].sharp;
    }
  }
  return out;
}

}  // namespace bubblesim::nccl
