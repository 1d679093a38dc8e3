# House rules a reader of the tree relies on, checked on every file under sim/, schedules/,
# topologies/ and tools/ (run with cmake -DSOURCE_DIR=<repo> -P tests/layering/structure_test.cmake):
#   - no file is longer than 500 lines (split it by concern);
#   - every header starts with `#pragma once` and then a comment saying what it is for;
#   - no file of the repository (sources, tests, docs, scenarios, README) cites a document that is not
#     in it: the design notes and schedule reference the project started from live outside the
#     repository, so the code cites docs/ instead (docs/schedule-rules.md).
# Every violation is printed as FILE:LINE; the test fails when there is one.
cmake_minimum_required(VERSION 3.25)
set(max_lines 500)

file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/sim/* ${SOURCE_DIR}/schedules/*
     ${SOURCE_DIR}/topologies/* ${SOURCE_DIR}/tools/*)
list(SORT files)
list(LENGTH files count)
if(count LESS 100)
  message(FATAL_ERROR "only ${count} files found under ${SOURCE_DIR}: wrong SOURCE_DIR?")
endif()
set(problems "")
foreach(file IN LISTS files)
  file(STRINGS ${SOURCE_DIR}/${file} lines)
  file(READ ${SOURCE_DIR}/${file} text)
  string(REGEX MATCHALL "\n" newlines "${text}")
  list(LENGTH newlines length)
  if(length GREATER max_lines)
    string(APPEND problems "${file}:${length}: ${length} lines, more than ${max_lines}\n")
  endif()
  if(file MATCHES "\\.h$")
    list(LENGTH lines n)
    set(first "")
    set(second "")
    if(n GREATER 0)
      list(GET lines 0 first)
    endif()
    if(n GREATER 1)
      list(GET lines 1 second)
    endif()
    if(NOT first STREQUAL "#pragma once" OR NOT second MATCHES "^// .")
      string(APPEND problems "${file}:1: a header starts with #pragma once and a comment saying "
                             "what it is for\n")
    endif()
  endif()
endforeach()
# Citations of documents outside the repository. The names are assembled so that this file does
# not match itself.
set(outside_docs "\\.\\./shared|DESIGN\\.md|SCHEDULES\\.md")
file(GLOB_RECURSE cited RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/sim/* ${SOURCE_DIR}/schedules/*
     ${SOURCE_DIR}/topologies/* ${SOURCE_DIR}/tools/* ${SOURCE_DIR}/tests/*.cpp
     ${SOURCE_DIR}/tests/*.h ${SOURCE_DIR}/tests/*.txt ${SOURCE_DIR}/tests/*.md
     ${SOURCE_DIR}/tests/*.py ${SOURCE_DIR}/tests/*.yaml ${SOURCE_DIR}/docs/*.md
     ${SOURCE_DIR}/scenarios/*)
list(APPEND cited README.md tests/CMakeLists.txt)
foreach(file IN LISTS cited)
  file(STRINGS ${SOURCE_DIR}/${file} lines REGEX "${outside_docs}")
  foreach(line IN LISTS lines)
    string(APPEND problems "${file}: cites a document outside the repository: ${line}\n")
  endforeach()
endforeach()
if(problems)
  message(FATAL_ERROR "structure:\n${problems}")
endif()
message(STATUS "structure: ${count} files, none over ${max_lines} lines, every header says what it is for, no citation outside the repository")
