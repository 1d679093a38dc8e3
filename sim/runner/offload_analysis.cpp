#include "sim/runner/offload_analysis.h"

#include <algorithm>

namespace bubblesim {

OffloadAnalysis analyze_offload(const ResolvedScenario& resolved) {
  const Scenario& scenario = *resolved.scenario;
  OffloadAnalysis a;
  const OffloadBandwidths& bw = resolved.offload;
  if (bw.d2h.empty()) return a;
  a.bandwidth = *std::min_element(bw.d2h.begin(), bw.d2h.end());
  if (a.bandwidth->bytes_per_second() <= 0.0) return a;
  for (std::size_t s = 0; s < resolved.costs.stages.size() && s < bw.d2h.size(); ++s) {
    const StageCost& c = resolved.costs.stages[s];
    Time compute = c.forward + c.backward_input + c.backward_weight;
    if (c.activation <= Bytes::zero() || compute <= Time::zero() ||
        bw.d2h[s].bytes_per_second() <= 0.0)
      continue;
    double k = c.activation.as_double() / bw.d2h[s].bytes_per_second() / compute.seconds();
    if (!a.k || k > *a.k) {
      a.k = k;
      a.k_stage = static_cast<std::int32_t>(s);
    }
  }
  if (scenario.model && scenario.gpu) {
    const double h = static_cast<double>(scenario.model->hidden);
    const double seq = static_cast<double>(scenario.model->seq_len);
    const double flops =
        scenario.gpu->flops.flops_per_second() * scenario.gpu->nominal_efficiency();
    a.k_formula = 10.0 / (3.0 * (6.0 * h + seq)) * flops / a.bandwidth->bytes_per_second();
  }
  if (a.k)
    a.hidden = *a.k <= 1.0;
  else if (a.k_formula)
    a.hidden = *a.k_formula <= 1.0;
  return a;
}

}  // namespace bubblesim
