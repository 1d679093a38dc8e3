#include "sim/scenario/sections/model_section.h"

#include "sim/costmodel/model_reader.h"
#include "sim/scenario/scenario.h"

namespace bubblesim {

void read_model_section(LoadContext& context, Scenario& sc) {
  if (auto node = context.section("model"))
    sc.model = read_transformer_model(*node, context.diags());
  if (auto node = context.section("cluster")) {
    MapReader cluster(*node, context.diags(), {"gpu"});
    if (auto gpu_node = cluster.require("gpu")) {
      sc.gpu = read_gpu_spec(*gpu_node, sc.model ? &*sc.model : nullptr, context.diags());
    }
  }
}

}  // namespace bubblesim
