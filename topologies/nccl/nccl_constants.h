#pragma once
// NCCL's own numbers, as NVIDIA/nccl 2.30.7 (commit 5067397c) carries them: the tuning model's
// latencies and per-channel bandwidth caps (src/graph/tuning.cc), the per-channel speeds its
// topology search tries (src/graph/search.cc) and the bandwidths it assigns to NVLink, PCIe and
// the NICs (src/graph/topo.h, topo.cc). Nothing here was chosen by bubblesim: every table is
// NCCL's, with the file and lines it comes from, indexed the way NCCL indexes it.

#include <array>

namespace bubblesim::nccl {

/// NCCL's GPU generations (tuning.cc's compCapIndex): the tables below have one row each.
enum class Arch { Volta = 0, Ampere = 1, Hopper = 2, Blackwell = 3 };
/// NCCL's algorithms in its own order (src/include/device.h NCCL_ALGO_*).
enum class Algo { Tree = 0, Ring, CollNetDirect, CollNetChain, Nvls, NvlsTree, Pat };
inline constexpr int kAlgos = 7;
/// NCCL's protocols (NCCL_PROTO_*).
enum class Proto { LL = 0, LL128, Simple };
inline constexpr int kProtos = 3;

/// Link kinds of the hardware latencies (NCCL_HW_*).
enum class Hw { NvLink = 0, Pci, Net };

using AlgoProto = std::array<std::array<double, kProtos>, kAlgos>;

/// tuning.cc:150-155, ncclTunerConstantsDefaults.baseLatencies (us).
inline constexpr AlgoProto kBaseLatency{{{6.8, 14.0, 8.4},
                                         {6.6, 14.0, 8.4},
                                         {0, 0, 0},
                                         {0, 0, 0},
                                         {0, 0, 0},
                                         {0, 0, 0},
                                         {8.0, 8.0, 8.0}}};

/// tuning.cc:157-176, hwLatencies[NVLINK | PCI | NET] (us per step).
inline constexpr std::array<AlgoProto, 3> kHwLatency{{
    {{{0.6, 1.25, 4.0},
      {0.6, 1.9, 3.4},
      {0, 0, 3.7},
      {0, 0, 2.8},
      {0, 0, 25},
      {0, 0, 25},
      {0, 0, 4.0}}},
    {{{1.0, 1.9, 4.0},
      {1.0, 2.5, 5.7},
      {0, 0, 3.7},
      {0, 0, 2.8},
      {0, 0, 0},
      {0, 0, 0},
      {0, 0, 4.0}}},
    {{{5.0, 8.5, 14},
      {2.7, 4.0, 14.0},
      {0, 0, 31},
      {0, 0, 30},
      {0, 0, 18},
      {0, 0, 20.9},
      {0, 0, 14}}},
}};

/// Per generation, by node count (tuning.cc index2: 1 node, 2 nodes, more), GB/s.
using PerNodes = std::array<std::array<double, 3>, 4>;
/// tuning.cc:178-183, llMaxBws: the LL protocol's ceiling. Row 0 of the multi-node rows is an
/// Intel CPU's (index1 0), the one bubblesim assumes (AMD hosts are rows 1-2 in NCCL).
inline constexpr PerNodes kLlMaxBw{
    {{39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {2 * 141.0, 2 * 45.0, 2 * 35.0}}};
/// tuning.cc:185-190, perChMaxRingLL128Bws.
inline constexpr PerNodes kPerChMaxRingLL128Bw{
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}}};
/// tuning.cc:192-197, perChMaxTreeLL128Bws.
inline constexpr PerNodes kPerChMaxTreeLL128Bw{
    {{20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}}};
/// tuning.cc:199-204, perChMaxTreeBws.
inline constexpr PerNodes kPerChMaxTreeBw{
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}}};
/// tuning.cc:206-211, perChMaxNVLSTreeBws.
inline constexpr PerNodes kPerChMaxNvlsTreeBw{
    {{26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {0.0, 57.7, 45.5}, {0.0, 96.0, 80.0}}};

/// tuning.cc:139-144, nvlsEfficiency.
inline constexpr std::array<double, 4> kNvlsEfficiency{0.0, 0.0, 0.85, 0.74};

/// tuning.cc:623-627, treeCorrectionFactor[proto][log2(bytes / 64)], 64 B to 256 MiB.
inline constexpr std::array<std::array<double, 24>, kProtos> kTreeCorrection{{
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6,  .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6,  .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5,
     .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9, .9},
}};

/// tuning.cc:228-233 getNetOverhead: 1 us per network step on an Intel (or non-x86) host.
inline constexpr double kNetOverheadUs = 1.0;

/// search.cc:1051-1067: the per-channel speeds (GB/s) the search tries, fastest first, inside one
/// node (intra) and across nodes (inter), per generation (Volta and Ampere share the first pair).
inline constexpr std::array<double, 13> kSpeedIntra{40.0, 30.0, 20.0, 18.0, 15.0, 12.0, 10.0,
                                                    9.0,  7.0,  6.0,  5.0,  4.0,  3.0};
inline constexpr std::array<double, 19> kSpeedInter{48.0, 30.0, 28.0, 24.0, 20.0, 18.0, 15.0,
                                                    12.0, 10.0, 9.0,  7.0,  6.0,  5.0,  4.0,
                                                    3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr std::array<double, 11> kSpeedIntraSm90{60.0, 50.0, 40.0, 30.0, 24.0, 20.0,
                                                        15.0, 12.0, 11.0, 6.0,  3.0};
inline constexpr std::array<double, 17> kSpeedInterSm90{48.0, 45.0, 42.0, 40.0, 30.0, 24.0,
                                                        22.0, 20.0, 17.5, 15.0, 12.0, 6.0,
                                                        3.0,  2.4,  1.2,  0.24, 0.12};
inline constexpr std::array<double, 12> kSpeedIntraSm100{90.0, 80.0, 70.0, 60.0, 50.0, 45.0,
                                                         40.0, 30.0, 24.0, 20.0, 19.0, 18.0};
inline constexpr std::array<double, 20> kSpeedInterSm100{96.0, 86.0, 80.0, 48.0, 45.1, 42.0, 40.0,
                                                         30.0, 24.0, 22.0, 20.0, 17.5, 15.0, 12.0,
                                                         6.0,  3.0,  2.4,  1.2,  0.24, 0.12};

/// topo.h:19-24: the bandwidth NCCL counts per NVLink (GB/s, one direction), by generation.
inline constexpr std::array<double, 4> kNcclNvLinkBw{20.0, 20.0, 20.6, 40.1};
/// The datasheet rate of one NVLink, one direction (GB/s): V100 NVLink 2 (6 links, 300 GB/s both
/// ways), A100 NVLink 3 (12 links, 600 GB/s), H100 NVLink 4 (18 links, 900 GB/s), B200 NVLink 5
/// (18 links, 1.8 TB/s): NVIDIA's V100, A100, H100 and B200 datasheets. A topology's NVLink
/// bandwidth over this is the number of links NCCL would count.
inline constexpr std::array<double, 4> kDatasheetNvLinkBw{25.0, 25.0, 25.0, 50.0};
/// topo.cc:545-557 and 656-657: NCCL counts a PCIe link at width x (GT/s per lane x 0.75) / 8,
/// e.g. Gen5 x16 (32 GT/s) at 48 GB/s where the raw rate is 64 GB/s.
inline constexpr double kNcclPciShare = 0.75;

/// device.h:91 MAXCHANNELS; a ring searches up to half of them (init.cc:1177).
inline constexpr int kMaxChannels = 64;
/// device.h:213 NCCL_MAX_NVLS_ARITY: the most NVLS heads (channels of the NVLS graph).
inline constexpr int kMaxNvlsArity = 32;
/// device.h:199 NCCL_MAX_DIRECT_ARITY: CollNet Direct and Chain run up to 8 local GPUs.
inline constexpr int kMaxDirectArity = 7;

}  // namespace bubblesim::nccl
