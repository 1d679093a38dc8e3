#include "sim/scenario/sections/communication_section.h"
#include "sim/scenario/sections/cost_form_section.h"
#include "sim/scenario/sections/costs_section.h"
#include "sim/scenario/sections/faults_section.h"
#include "sim/scenario/sections/iteration_section.h"
#include "sim/scenario/sections/memory_section.h"
#include "sim/scenario/sections/model_section.h"
#include "sim/scenario/sections/parallelism_section.h"
#include "sim/scenario/sections/pipeline_section.h"
#include "sim/scenario/sections/schedules_section.h"
#include "sim/scenario/sections/section_reader.h"
#include "sim/scenario/sections/training_section.h"
#include "sim/scenario/sections/variability_section.h"

namespace bubblesim {

const std::vector<SectionReader>& section_readers() {
  // Reading order: the pipeline size first (per-stage lists need it), the model before the costs
  // derived from it, parallelism before the global batch split over its dp replicas (training),
  // parallelism before the placement of its ranks, the topology before memory
  // (offload hosts) and faults (links); variability after the costs (a profile's cv), the network
  // and memory (whether transfers and copies can vary); last, the check of the mechanisms against
  // the cost form and the variability, which needs them all.
  static const std::vector<SectionReader> readers{
      {{"name", "description"}, read_labels_section},
      {{"pipeline"}, read_pipeline_section},
      {{"model", "cluster"}, read_model_section},
      {{"costs"}, read_costs_section},
      {{"parallelism", "data_parallel", "overlap"}, read_parallelism_section},
      {{"training"}, read_training_section},
      {{"communication", "topology", "placement"}, read_communication_section},
      {{"memory"}, read_memory_section},
      {{"faults"}, read_faults_section},
      {{"iteration"}, read_iteration_section},
      {{"variability"}, read_variability_section},
      {{"schedules"}, read_schedules_section},
      {{}, check_cost_form},  // what the given costs leave the model's mechanisms to do
  };
  return readers;
}

}  // namespace bubblesim
