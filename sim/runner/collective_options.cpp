#include "sim/runner/collective_options.h"

namespace bubblesim {

CollectiveOptions collective_options(const Scenario& scenario) {
  const DataParallelSpec& dp = scenario.parallelism.data_parallel;
  CollectiveOptions o;
  o.algorithm = dp.algorithm;
  o.ring_steps = dp.ring_steps;
  o.channels = dp.channels;
  if (scenario.gpu && scenario.gpu->mechanisms.nccl_tuning)
    o.nccl = nccl::arch_of_compute_capability(scenario.gpu->measured.compute_capability);
  // The scenario reader scaled the NICs' links to NCCL's share of their line rate
  // (communication_section.cpp); NCCL's own search sees the line rate.
  if (scenario.gpu && scenario.gpu->mechanisms.nccl && scenario.gpu->measured.net_efficiency > 0)
    o.nic_scale = scenario.gpu->measured.net_efficiency;
  return o;
}

}  // namespace bubblesim
