# The layer graph, written down once. The build checks every library's links against it
# (bubblesim_check_layer_links, called at the end of the top-level CMakeLists.txt) and the
# layering test (tests/layering/layering_test.cmake) checks every #include of the sources
# against it, so a wrong-way dependency fails at configure time or in ctest, whichever it is.
#
#   bubblesim_layer(NAME PATHS prefix... TARGETS target... USES layer... [INTERNAL header...])
#
# PATHS: the source folders of the layer (path prefixes from the repository root; the first
# layer declared whose prefix matches a file owns it, so a folder inside another layer's folder,
# such as schedules/generators/ in schedules/, is declared before it). TARGETS: its CMake targets.
# USES: the layers it may use directly (what those use is allowed too). INTERNAL: headers that
# only the layer itself (and the tests) may include; a layer without an INTERNAL list exposes
# every header it has.
#
# Read as a graph: units <- table <- {generators, optimizer} <- builtin_generators;
# units <- topologies; {table, topologies} <- engine <- variability; table <- costmodel;
# {costmodel, engine} <- scenario <- runner <- reports <- {sweep, calibration} <- cli;
# sweep <- plan <- cli.
set(BUBBLESIM_LAYERS "")

macro(bubblesim_layer name)
  cmake_parse_arguments(_layer "" "" "PATHS;TARGETS;USES;INTERNAL" ${ARGN})
  list(APPEND BUBBLESIM_LAYERS ${name})
  set(BUBBLESIM_LAYER_${name}_PATHS ${_layer_PATHS})
  set(BUBBLESIM_LAYER_${name}_TARGETS ${_layer_TARGETS})
  set(BUBBLESIM_LAYER_${name}_USES ${_layer_USES})
  set(BUBBLESIM_LAYER_${name}_INTERNAL ${_layer_INTERNAL})
endmacro()

bubblesim_layer(units PATHS sim/units/ TARGETS bubblesim_units)
bubblesim_layer(plugin PATHS schedules/examples/ TARGETS bubblesim_1f1b_warmup USES table)
bubblesim_layer(generators PATHS schedules/generators/ schedules/passes/ TARGETS bubblesim_generators
                USES table)
bubblesim_layer(optimizer PATHS schedules/optimizer/ TARGETS bubblesim_optimizer USES table)
bubblesim_layer(builtin_generators PATHS schedules/builtin_generators
                TARGETS bubblesim_builtin_generators USES generators optimizer)
bubblesim_layer(table PATHS schedules/ TARGETS bubblesim_table USES units)
bubblesim_layer(topologies PATHS topologies/ TARGETS bubblesim_topologies USES units)
# The engine's public face is engine.h and the types it hands out (results, metrics, memory
# timelines, collectives, the streamed replay); how it replays is its own business.
bubblesim_layer(engine PATHS sim/engine/ TARGETS bubblesim_engine USES table topologies
                INTERNAL sim/engine/list_replay.h sim/engine/list_replay_lanes.h
                         sim/engine/event_loop.h sim/engine/event_queue.h
                         sim/engine/device_memory.h sim/engine/gradient_sync_state.h
                         sim/engine/iteration_end.h
                         sim/engine/engine_component.h sim/engine/components/
                         sim/engine/network/ sim/engine/op_graph.h sim/engine/op_index.h
                         sim/engine/max_min_flows.h sim/engine/memory_accounting.h
                         sim/engine/end_window.h sim/engine/symmetry/flow_classes.h
                         sim/engine/symmetry/class_flows.h sim/engine/symmetry/shape_port.h
                         sim/engine/symmetry/collective_launcher.h)
bubblesim_layer(variability PATHS sim/variability/ TARGETS bubblesim_variability USES engine)
bubblesim_layer(costmodel PATHS sim/costmodel/ TARGETS bubblesim_costmodel USES table)
# The scenario layer reads the keys the engine's behaviours declare (sim/engine/component_kind.h).
bubblesim_layer(scenario PATHS sim/scenario/ TARGETS bubblesim_scenario
                USES table topologies costmodel engine)
bubblesim_layer(runner PATHS sim/runner/ TARGETS bubblesim_runner
                USES scenario engine variability generators)
bubblesim_layer(reports PATHS sim/report/ TARGETS bubblesim_reports USES runner)
bubblesim_layer(sweep PATHS sim/sweep/ TARGETS bubblesim_sweep USES reports)
bubblesim_layer(calibration PATHS sim/calibration/ TARGETS bubblesim_calibration
                USES scenario reports)
bubblesim_layer(plan PATHS sim/plan/ TARGETS bubblesim_plan USES sweep)
bubblesim_layer(cli PATHS tools/cli/ TARGETS bubblesim USES plan sweep calibration
                builtin_generators)

# BUBBLESIM_LAYER_<name>_REACHES: every layer <name> may use, directly or through others.
foreach(_layer IN LISTS BUBBLESIM_LAYERS)
  set(_reach ${BUBBLESIM_LAYER_${_layer}_USES})
  set(_frontier ${_reach})
  while(_frontier)
    list(POP_FRONT _frontier _next)
    foreach(_dep IN LISTS BUBBLESIM_LAYER_${_next}_USES)
      if(NOT _dep IN_LIST _reach)
        list(APPEND _reach ${_dep})
        list(APPEND _frontier ${_dep})
      endif()
    endforeach()
  endwhile()
  set(BUBBLESIM_LAYER_${_layer}_REACHES ${_reach})
endforeach()

# The layer owning a repository path (a source file or an #include), or "" for none.
function(bubblesim_layer_of path out)
  foreach(layer IN LISTS BUBBLESIM_LAYERS)
    foreach(prefix IN LISTS BUBBLESIM_LAYER_${layer}_PATHS)
      string(FIND "${path}" "${prefix}" at)
      if(at EQUAL 0)
        set(${out} ${layer} PARENT_SCOPE)
        return()
      endif()
    endforeach()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

# True in `out` when `header` is one of its layer's INTERNAL headers (a file or a folder prefix).
function(bubblesim_is_internal layer header out)
  foreach(internal IN LISTS BUBBLESIM_LAYER_${layer}_INTERNAL)
    string(FIND "${header}" "${internal}" at)
    if(at EQUAL 0)
      set(${out} TRUE PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} FALSE PARENT_SCOPE)
endfunction()

# Configure-time check: every layer target links only its own layer's targets and those of the
# layers it may use (bubblesim:: aliases resolved; other libraries are not layers).
function(bubblesim_check_layer_links)
  foreach(layer IN LISTS BUBBLESIM_LAYERS)
    foreach(target IN LISTS BUBBLESIM_LAYER_${layer}_TARGETS)
      set(layer_of_${target} ${layer})
    endforeach()
  endforeach()
  set(problems "")
  foreach(layer IN LISTS BUBBLESIM_LAYERS)
    foreach(target IN LISTS BUBBLESIM_LAYER_${layer}_TARGETS)
      if(NOT TARGET ${target})
        continue()  # an optional target this build does not make
      endif()
      get_target_property(links ${target} LINK_LIBRARIES)
      foreach(link IN LISTS links)
        if(NOT TARGET ${link})
          continue()
        endif()
        get_target_property(real ${link} ALIASED_TARGET)
        if(NOT real)
          set(real ${link})
        endif()
        set(to ${layer_of_${real}})
        if(NOT to OR to STREQUAL layer OR to IN_LIST BUBBLESIM_LAYER_${layer}_REACHES)
          continue()
        endif()
        string(REPLACE ";" ", " may "${BUBBLESIM_LAYER_${layer}_REACHES}")
        string(APPEND problems "  ${target} (${layer}) links ${real} of the ${to} layer; "
                               "${layer} may use: ${may}\n")
      endforeach()
    endforeach()
  endforeach()
  if(problems)
    message(FATAL_ERROR "links against the layer graph (cmake/BubblesimLayers.cmake):\n${problems}")
  endif()
endfunction()
