#include "topologies/nccl/nccl_tuning.h"

#include <algorithm>
#include <limits>

namespace bubblesim::nccl {
namespace {

int index_of(CollectiveKind k) { return static_cast<int>(k); }
int index_of(Algo a) { return static_cast<int>(a); }
int index_of(Proto p) { return static_cast<int>(p); }
int index_of(Arch a) { return static_cast<int>(a); }

/// utils.h log2i: floor(log2 n), -1 for 0.
int log2i(long n) {
  int k = -1;
  while (n > 0) {
    n >>= 1;
    ++k;
  }
  return k;
}

bool collnet_algo(Algo a) { return a == Algo::CollNetDirect || a == Algo::CollNetChain; }
bool nvls_algo(Algo a) { return a == Algo::Nvls || a == Algo::NvlsTree; }
bool gather_or_scatter(CollectiveKind k) { return k != CollectiveKind::AllReduce; }

/// tuning.cc:294-304 and enqueue.cc:1999-2012: whether NCCL considers algo/proto for `kind`.
bool considered(const Comm& c, CollectiveKind kind, Algo a, Proto p) {
  if (gather_or_scatter(kind) && a != Algo::Pat && a != Algo::Ring && a != Algo::Nvls &&
      a != Algo::CollNetDirect)
    return false;
  if (kind == CollectiveKind::AllReduce && a == Algo::Pat) return false;
  if (nvls_algo(a) && p != Proto::Simple) return false;
  // ncclPatEnable (tuning.cc:216-223): one GPU per node, the host's network stack.
  if (a == Algo::Pat && (p != Proto::Simple || c.nodes != c.ranks)) return false;
  if (collnet_algo(a) && !c.collnet) return false;
  const int local = c.ranks / c.nodes;
  if (collnet_algo(a) && local > kMaxDirectArity + 1) return false;
  if (nvls_algo(a) && (!c.nvls || (kind != CollectiveKind::AllReduce && local > kMaxNvlsArity)))
    return false;
  // tuning.cc:500-511: NVLS Tree needs several nodes; NVLS across nodes needs CollNet; CollNet
  // Direct an NVSwitch.
  if (a == Algo::NvlsTree && c.nodes == 1) return false;
  if (a == Algo::Nvls && c.nodes > 1 && !c.collnet) return false;
  if (a == Algo::CollNetDirect && !c.nvswitch) return false;
  // tuning.cc:518-536: LL128 where the GPUs talk over NVLink and reach their NICs within PXN.
  if (p == Proto::LL128) {
    const Graph& g = c.graphs[static_cast<std::size_t>(index_of(a))];
    if (!g.nvlink || (c.nodes > 1 && !g.net_pxn)) return false;
  }
  return true;
}

}  // namespace

std::optional<Arch> arch_of_compute_capability(int cc) {
  if (cc >= 100) return Arch::Blackwell;
  if (cc >= 90) return Arch::Hopper;
  if (cc >= 80) return Arch::Ampere;
  if (cc >= 70) return Arch::Volta;
  return std::nullopt;
}

std::string_view algo_name(Algo a) {
  switch (a) {
    case Algo::Tree:
      return "tree";
    case Algo::Ring:
      return "ring";
    case Algo::CollNetDirect:
      return "collnet_direct";
    case Algo::CollNetChain:
      return "collnet_chain";
    case Algo::Nvls:
      return "nvls";
    case Algo::NvlsTree:
      return "nvls_tree";
    case Algo::Pat:
      return "pat";
  }
  return "?";
}

std::string_view proto_name(Proto p) {
  switch (p) {
    case Proto::LL:
      return "LL";
    case Proto::LL128:
      return "LL128";
    case Proto::Simple:
      return "Simple";
  }
  return "?";
}

Tuning::Tuning(const Comm& comm) : comm_(comm) {
  const Comm& c = comm_;
  if (c.ranks <= 1) return;
  const int arch = index_of(c.arch);
  const int index2 = c.nodes <= 2 ? c.nodes - 1 : 2;
  // tuning.cc:269-271: one node reads the GPU's row of llMaxBws, several the (Intel) CPU's.
  const double ll_max =
      kLlMaxBw[static_cast<std::size_t>(c.nodes == 1 ? arch : 0)][static_cast<std::size_t>(index2)];
  auto per_nodes = [&](const PerNodes& t) {
    return t[static_cast<std::size_t>(arch)][static_cast<std::size_t>(index2)];
  };
  const double ppn = static_cast<double>(c.ranks) / c.nodes;
  for (CollectiveKind kind :
       {CollectiveKind::AllReduce, CollectiveKind::ReduceScatter, CollectiveKind::AllGather}) {
    const int nsteps = kind == CollectiveKind::AllReduce ? 2 * (c.ranks - 1) : c.ranks - 1;
    for (int ai = 0; ai < kAlgos; ++ai) {
      const auto a = static_cast<Algo>(ai);
      const Graph& g = c.graphs[static_cast<std::size_t>(ai)];
      for (int pi = 0; pi < kProtos; ++pi) {
        const auto p = static_cast<Proto>(pi);
        if (!considered(c, kind, a, p)) continue;
        // tuning.cc:305-324: the busBw of the algorithm's channels.
        double bw = c.nodes <= 2 || collnet_algo(a) ? g.bw_intra : g.bw_inter;
        if (nvls_algo(a)) {
          if (g.channels < 2) continue;
          double intra = g.bw_intra * kNvlsEfficiency[static_cast<std::size_t>(arch)] *
                         (g.channels - 1) / g.channels;
          intra *= kind == CollectiveKind::AllReduce ? 2.0 : (ppn - 1) / ppn;
          const double inter = g.bw_inter * (c.nodes <= 2 && a == Algo::NvlsTree ? 2 : 1);
          bw = std::min({intra, inter,
                         a == Algo::NvlsTree ? per_nodes(kPerChMaxNvlsTreeBw)
                                             : std::numeric_limits<double>::max()});
        }
        double bus = g.channels * bw;
        // tuning.cc:326-350: the refinements per algorithm and protocol.
        if (a == Algo::Ring && p == Proto::LL) bus = std::min(ll_max, bus * .5);
        if (a == Algo::Ring && p == Proto::LL128)
          bus = std::min(bus * 0.92, g.channels * per_nodes(kPerChMaxRingLL128Bw));
        if (a == Algo::Tree && kind == CollectiveKind::AllReduce)
          bus = std::min(bus * .92, g.channels * per_nodes(kPerChMaxTreeBw));
        if (a == Algo::Tree && p == Proto::LL) bus = std::min(bus * 1.0 / 3.8, ll_max);
        if (a == Algo::Tree && p == Proto::LL128)
          bus = std::min(bus * (c.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0),
                         g.channels * per_nodes(kPerChMaxTreeLL128Bw));
        if (a == Algo::Tree && c.simple_tree) bus *= .85;
        if (a == Algo::Pat) bus *= .75;
        if (collnet_algo(a) && p != Proto::Simple) bus = 0;
        if (a == Algo::CollNetDirect && p == Proto::Simple) {
          if (gather_or_scatter(kind)) {
            bus = ppn * std::min(g.bw_intra, g.bw_inter * 0.9);
          } else {
            double factor = ppn / g.channels;  // GPUs per NIC
            factor -= (factor - 1) / 2;
            bus /= factor;
            if (c.arch >= Arch::Hopper) bus *= .85;
          }
        }
        // tuning.cc:353-374: NVLS and CollNet Direct all-gather / reduce-scatter between nodes
        // need the SHARP plugin's own all-gather and reduce-scatter, which bubblesim does not
        // model: they do not run there.
        if ((a == Algo::Nvls || a == Algo::CollNetDirect) && gather_or_scatter(kind) && c.nodes > 1)
          bus = 0;
        // tuning.cc:376-382: bus bandwidth to algorithm bandwidth.
        if (!(a != Algo::Ring && gather_or_scatter(kind))) {
          const bool per_step = a == Algo::Ring || nvls_algo(a);
          bus *= per_step ? static_cast<double>(c.ranks) / nsteps : .5;
        }
        bandwidth_[static_cast<std::size_t>(index_of(kind))][static_cast<std::size_t>(ai)]
                  [static_cast<std::size_t>(pi)] = bus;
        // tuning.cc:384-435: the latencies.
        double lat = kBaseLatency[static_cast<std::size_t>(ai)][static_cast<std::size_t>(pi)];
        const Hw intra_hw = g.nvlink ? Hw::NvLink : Hw::Pci;
        double intra_lat = kHwLatency[static_cast<std::size_t>(intra_hw)]
                                     [static_cast<std::size_t>(ai)][static_cast<std::size_t>(pi)];
        const auto& net = kHwLatency[static_cast<std::size_t>(Hw::Net)];
        double inter_lat =
            ppn == 1
                ? net[static_cast<std::size_t>(index_of(Algo::Tree))][static_cast<std::size_t>(pi)]
                : net[static_cast<std::size_t>(ai)][static_cast<std::size_t>(pi)];
        inter_lat += g.latency_inter_us;
        if (p == Proto::Simple) inter_lat += g.latency_inter_us;  // the flush
        const int local = c.ranks / c.nodes;
        const int log_nodes = log2i(c.nodes);
        switch (a) {
          case Algo::Ring: {
            double overhead = 0;
            if (c.nodes > 1) overhead = kNetOverheadUs * (p == Proto::Simple ? 3 : 1);
            intra_lat = std::max(intra_lat, overhead);
            const int inter_steps = c.nodes == 1                        ? 0
                                    : kind == CollectiveKind::AllReduce ? 2 * (c.nodes - 1)
                                                                        : c.nodes - 1;
            lat += (nsteps - inter_steps) * intra_lat + inter_steps * inter_lat;
            break;
          }
          case Algo::Tree:
            if (kind == CollectiveKind::AllReduce)
              lat += 2 * ((local - 1) * intra_lat + log_nodes * inter_lat);
            break;
          case Algo::CollNetDirect:
            lat += 2 * (std::min(1, local - 1) * intra_lat + (local - 1) * 0.4) + inter_lat;
            break;
          case Algo::CollNetChain:
            lat += 2 * (local - 1) * intra_lat + inter_lat;
            break;
          case Algo::Nvls:
            lat = intra_lat + (c.nodes > 1 ? inter_lat : 0);
            break;
          case Algo::NvlsTree:
            lat += intra_lat + 2 * log_nodes * inter_lat;
            break;
          case Algo::Pat:
            lat += log_nodes * (inter_lat / 3.5) + c.ranks * 2.8;
            break;
        }
        latency_[static_cast<std::size_t>(index_of(kind))][static_cast<std::size_t>(ai)]
                [static_cast<std::size_t>(pi)] = lat;
      }
    }
  }
}

std::optional<Prediction> Tuning::predict(CollectiveKind kind, Algo algo, Proto proto,
                                          double bytes) const {
  const auto k = static_cast<std::size_t>(index_of(kind));
  const auto a = static_cast<std::size_t>(index_of(algo));
  const auto p = static_cast<std::size_t>(index_of(proto));
  double bw = bandwidth_[k][a][p];
  double lat = latency_[k][a][p];
  if (!(bw > 0)) return std::nullopt;
  // tuning.cc:639-653 (ncclTopoGetAlgoTime, one operation: numPipeOps 1).
  const auto n = static_cast<long>(std::max(bytes, 0.0));
  const int log_size = log2i(n >> 6);
  if (algo == Algo::Tree && kind == CollectiveKind::AllReduce && log_size >= 0 && log_size < 23)
    bw *= kTreeCorrection[p][static_cast<std::size_t>(log_size)];
  if (algo == Algo::NvlsTree && kind == CollectiveKind::AllReduce && log_size >= 0 &&
      log_size < 24 && comm_.arch >= Arch::Blackwell)
    bw *= kTreeCorrection[p][static_cast<std::size_t>(log_size)];
  if (algo == Algo::Ring && proto == Proto::Simple && comm_.nodes > 1 &&
      kind == CollectiveKind::AllReduce &&
      bytes / (static_cast<double>(comm_.channels) * comm_.ranks) >= 64)
    lat *= comm_.arch < Arch::Ampere ? 1.9 : 1.4;  // the ring's plateau
  Prediction out;
  out.algo = algo;
  out.proto = proto;
  out.latency_us = lat;
  out.bandwidth = bw;
  out.time_us = lat + bytes / (1000.0 * bw);
  return out;
}

std::optional<Prediction> Tuning::choose(CollectiveKind kind, double bytes,
                                         std::optional<Algo> only) const {
  std::optional<Prediction> best;
  for (int a = 0; a < kAlgos; ++a) {
    if (only && static_cast<Algo>(a) != *only) continue;
    for (int p = 0; p < kProtos; ++p) {
      auto t = predict(kind, static_cast<Algo>(a), static_cast<Proto>(p), bytes);
      if (t && (!best || t->time_us < best->time_us)) best = t;  // ties: NCCL's order
    }
  }
  return best;
}

}  // namespace bubblesim::nccl
