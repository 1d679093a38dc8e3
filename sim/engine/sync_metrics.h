#pragma once
// SyncMetrics: gradient synchronisation, optimizer and tensor-parallel results of one replay
// (docs/parallelism.md). All zero when the scenario has no parallelism / sync plan.

#include <cstdint>
#include <string>
#include <vector>

#include "sim/units/bytes.h"
#include "sim/units/time.h"

namespace bubblesim {

/// One kind of collective of one stage, summed over its buckets: simulated against closed form.
struct CollectiveSummary {
  std::string
      name;  // "dp all-reduce stage 3", "dp reduce-scatter stage 0 (per B op)", "replica ..."
  std::string algorithm;  // ring, tree, hierarchical
  std::int32_t ranks = 0;
  std::int32_t count = 0;  // buckets (or ops for TP)
  Bytes bytes;             // per rank, summed over the buckets
  Time simulated;          // summed durations (start to last arrival)
  Time closed_form;        // summed alpha-beta closed forms
};

struct LinkClassUsage {
  std::string name;  // "gpu-switch": the vertex kinds of the two ends, sorted
  Time busy;         // summed over the directed links of the class
  Bytes bytes;
};

struct SyncMetrics {
  bool enabled = false;
  Time dp_sync;           // largest over stages of its DP all-reduce time (sum over buckets)
  Time exposed_dp_sync;   // end of the last gradient sync minus end of the last compute op (>= 0)
  Time replica_sync;      // largest over stages of its replica all-reduce time
  Time optimizer;         // largest optimizer step over devices
  Time parameter_gather;  // ZeRO >= 1: largest post-step parameter all-gather over devices
  Time tp_comm;           // largest over devices of the TP all-reduce time inside its ops
  Time compute_end;       // end of the last compute op (before the syncs)
  /// overlap.comm_sm_fraction: the largest over devices of the time its compute ran longer
  /// because its gradient buckets' kernels held SMs (SyncPlan::overlap.sm_share).
  Time sm_slowdown;
  std::vector<Time> sync_end_per_device;
  std::vector<Time> optimizer_end_per_device;
  std::vector<CollectiveSummary> collectives;
  std::vector<LinkClassUsage> link_classes;
};

}  // namespace bubblesim
