# Scenario loading sources, included by tools/CMakeLists.txt into bubblesim_tools_core.
set(BUBBLESIM_SCENARIO_SOURCES
  scenario/scenario_loader.cpp
  scenario/transformer_costs.cpp
  scenario/cost_profile_csv.cpp
  scenario/parallelism.cpp
)
