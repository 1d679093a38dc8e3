# Scenario loading sources, included by tools/CMakeLists.txt into bubblesim_tools_core.
set(BUBBLESIM_SCENARIO_SOURCES
  scenario/scenario.cpp
  scenario/scenario_loader.cpp
  scenario/transformer_costs.cpp
  scenario/cost_profile_csv.cpp
  scenario/sections/section_readers.cpp
  scenario/sections/pipeline_section.cpp
  scenario/sections/model_section.cpp
  scenario/sections/costs_section.cpp
  scenario/sections/parallelism_section.cpp
  scenario/sections/communication_section.cpp
  scenario/sections/placement.cpp
  scenario/sections/memory_section.cpp
  scenario/sections/faults_section.cpp
  scenario/sections/variability_section.cpp
  scenario/sections/schedules_section.cpp
)
