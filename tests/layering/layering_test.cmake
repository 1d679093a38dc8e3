# The layering test: every #include of a source file of a layer must point to its own layer or to
# one it may use, and never to another layer's internal headers. The layers, their folders, what
# each may use and its internals are in cmake/BubblesimLayers.cmake (the build checks the
# libraries' links against the same graph). Run with
#   cmake -DSOURCE_DIR=<repo> -P tests/layering/layering_test.cmake
# It prints every wrong include as FILE:LINE and fails when there is one.
cmake_minimum_required(VERSION 3.25)
include(${SOURCE_DIR}/cmake/BubblesimLayers.cmake)

set(globs "")
foreach(layer IN LISTS BUBBLESIM_LAYERS)
  foreach(prefix IN LISTS BUBBLESIM_LAYER_${layer}_PATHS)
    string(REGEX REPLACE "/[^/]*$" "" folder "${prefix}")  # schedules/builtin_generators -> schedules
    foreach(extension h cpp in)
      list(APPEND globs ${SOURCE_DIR}/${folder}/*.${extension})
    endforeach()
  endforeach()
endforeach()
list(REMOVE_DUPLICATES globs)
file(GLOB_RECURSE sources RELATIVE ${SOURCE_DIR} ${globs})
list(REMOVE_DUPLICATES sources)
list(SORT sources)

set(violations "")
set(checked 0)
foreach(source IN LISTS sources)
  bubblesim_layer_of("${source}" from)
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
    bubblesim_layer_of("${header}" to)
    if(NOT to OR to STREQUAL from)
      continue()
    endif()
    if(NOT to IN_LIST BUBBLESIM_LAYER_${from}_REACHES)
      string(REPLACE ";" ", " may "${BUBBLESIM_LAYER_${from}_REACHES}")
      string(APPEND violations
             "${source}:${line_number}: ${from} includes ${header} of the ${to} layer, "
             "a wrong-way dependency (${from} may use: ${may})\n")
      continue()
    endif()
    bubblesim_is_internal(${to} "${header}" internal)
    if(internal)
      string(APPEND violations
             "${source}:${line_number}: ${from} includes ${header}, internal to the ${to} layer "
             "(cmake/BubblesimLayers.cmake lists its internals; use its public headers)\n")
    endif()
  endforeach()
endforeach()

if(checked LESS 50)
  message(FATAL_ERROR "only ${checked} files found under ${SOURCE_DIR}: wrong SOURCE_DIR?")
endif()
if(violations)
  message(FATAL_ERROR "wrong includes:\n${violations}")
endif()
message(STATUS "layering: ${checked} files, every include goes down the layers to public headers")
