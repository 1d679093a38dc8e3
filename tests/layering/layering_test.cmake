# The layering test: every #include of a source file under sim/, schedules/, topologies/ and
# tools/ must point to its own layer or to one it may depend on (README "Layers"). Run with
#   cmake -DSOURCE_DIR=<repo> -P tests/layering/layering_test.cmake
# It prints every wrong-way include as FILE:LINE and fails when there is one.
cmake_minimum_required(VERSION 3.25)

# Layers, matched by path prefix in this order (the first match wins).
set(layer_prefixes
  "sim/units/:units"
  "schedules/examples/:plugin"
  "schedules/generators/:generators"
  "schedules/passes/:generators"
  "schedules/optimizer/:optimizer"
  "schedules/builtin_generators:builtin_generators"
  "schedules/:table"
  "topologies/:topologies"
  "sim/engine/:engine"
  "sim/variability/:variability"
  "tools/costmodel/:costmodel"
  "tools/scenario/:scenario"
  "tools/runner/:runner"
  "tools/report/:reports"
  "tools/sweep/:sweep"
  "tools/calibration/:calibration"
  "tools/cli/:cli"
)
# What each layer may include directly, besides itself; what those may include is allowed too.
set(allowed_units "")
set(allowed_table units)
set(allowed_topologies units)
set(allowed_plugin table)
set(allowed_generators table)
set(allowed_optimizer table)
set(allowed_builtin_generators generators optimizer)
set(allowed_engine table topologies)
set(allowed_variability engine)
set(allowed_costmodel table)
set(allowed_scenario table topologies costmodel)
set(allowed_runner scenario engine variability generators)
set(allowed_reports runner)
set(allowed_sweep reports)
set(allowed_calibration scenario reports)
set(allowed_cli sweep calibration builtin_generators)

function(layer_of path out)
  foreach(entry IN LISTS layer_prefixes)
    string(REPLACE ":" ";" parts "${entry}")
    list(GET parts 0 prefix)
    list(GET parts 1 layer)
    string(FIND "${path}" "${prefix}" at)
    if(at EQUAL 0)
      set(${out} ${layer} PARENT_SCOPE)
      return()
    endif()
  endforeach()
  set(${out} "" PARENT_SCOPE)
endfunction()

# The transitive closure of allowed_<layer>, into reachable_<layer>.
set(layers units table topologies plugin generators optimizer builtin_generators engine variability
           costmodel scenario runner reports sweep calibration cli)
foreach(layer IN LISTS layers)
  set(reach ${allowed_${layer}})
  set(frontier ${reach})
  while(frontier)
    list(POP_FRONT frontier next)
    foreach(dep IN LISTS allowed_${next})
      if(NOT dep IN_LIST reach)
        list(APPEND reach ${dep})
        list(APPEND frontier ${dep})
      endif()
    endforeach()
  endwhile()
  set(reachable_${layer} ${reach})
endforeach()

file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR}
     ${SOURCE_DIR}/sim/*.h ${SOURCE_DIR}/sim/*.cpp ${SOURCE_DIR}/schedules/*.h
     ${SOURCE_DIR}/schedules/*.cpp ${SOURCE_DIR}/schedules/*.in ${SOURCE_DIR}/topologies/*.h
     ${SOURCE_DIR}/topologies/*.cpp ${SOURCE_DIR}/tools/*.h ${SOURCE_DIR}/tools/*.cpp)
list(SORT sources)
set(violations "")
set(checked 0)
foreach(source IN LISTS sources)
  layer_of("${source}" from)
  if(NOT from)
    continue()
  endif()
  math(EXPR checked "${checked} + 1")
  file(STRINGS ${SOURCE_DIR}/${source} lines)
  set(line_number 0)
  foreach(line IN LISTS lines)
    math(EXPR line_number "${line_number} + 1")
    if(NOT line MATCHES "^#include \"([^\"]+)\"")
      continue()
    endif()
    set(header "${CMAKE_MATCH_1}")
    layer_of("${header}" to)
    if(NOT to OR to STREQUAL from OR to IN_LIST reachable_${from})
      continue()
    endif()
    string(REPLACE ";" ", " may "${reachable_${from}}")
    string(APPEND violations
           "${source}:${line_number}: ${from} includes ${header} of the ${to} layer, "
           "a wrong-way dependency (${from} may use: ${may})\n")
  endforeach()
endforeach()

if(checked LESS 50)
  message(FATAL_ERROR "only ${checked} files found under ${SOURCE_DIR}: wrong SOURCE_DIR?")
endif()
if(violations)
  message(FATAL_ERROR "wrong-way includes:\n${violations}")
endif()
message(STATUS "layering: ${checked} files, every include goes down the layers")
