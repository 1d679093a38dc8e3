#include "schedules/closed_forms.h"

namespace bubblesim {

bool has_uniform_stage_times(const CostProfile& costs) {
  for (const StageCost& c : costs.stages) {
    const StageCost& first = costs.stages.front();
    if (c.forward != first.forward || c.backward_input != first.backward_input ||
        c.backward_weight != first.backward_weight) {
      return false;
    }
  }
  return true;
}

double flush_pipeline_bubble_ratio(int devices, int microbatches) {
  return static_cast<double>(devices - 1) / static_cast<double>(microbatches + devices - 1);
}

double interleaved_bubble_ratio(int devices, int microbatches, int chunks) {
  return static_cast<double>(devices - 1) /
         static_cast<double>(chunks * microbatches + devices - 1);
}

}  // namespace bubblesim
