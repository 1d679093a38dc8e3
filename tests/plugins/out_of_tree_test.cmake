# Runs docs/plugins.md "Write your own schedule" as written (cmake -P; see CMakeLists.txt):
#   1. the walkthrough shows the example plugin's files verbatim,
#   2. cmake --install the build to a fresh prefix,
#   3. put those files in an empty folder, configure it with CMAKE_PREFIX_PATH=prefix and build,
#      with CBC out of sight: the installed package must not mention it, pkg-config is pointed at
#      an empty folder (so cbc.pc cannot be found), and the plugin is linked with
#      --no-undefined (every symbol it needs comes from the table model and its dependencies),
#   4. the installed bubblesim loads the result: list shows it, check-plugin passes.
cmake_minimum_required(VERSION 3.25)

function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${ARGN}\n${out}\n${err}")
  endif()
  set(step_output "${out}" PARENT_SCOPE)
endfunction()

set(example ${SOURCE_DIR}/schedules/examples/1f1b_warmup)
file(READ ${SOURCE_DIR}/docs/plugins.md walkthrough)
foreach(name CMakeLists.txt one_f_one_b_warmup.cpp)
  file(READ ${example}/${name} content)
  string(FIND "${walkthrough}" "${content}" at)
  if(at EQUAL -1)
    message(FATAL_ERROR "docs/plugins.md does not show ${example}/${name} verbatim; update the walkthrough")
  endif()
endforeach()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run_step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
file(GLOB_RECURSE package_files ${prefix}/lib/cmake/bubblesim/*.cmake)
foreach(file IN LISTS package_files)
  file(READ ${file} content)
  string(REGEX REPLACE "#[^\n]*" "" content "${content}")  # comments may say what is left out
  string(TOLOWER "${content}" content)
  if(content MATCHES "cbc|coin")
    message(FATAL_ERROR "${file} mentions CBC: the plugin package must be the table model only")
  endif()
endforeach()
# No pkg-config module is visible while the plugin is configured: CBC counts as not installed.
set(no_pkgconfig ${WORK_DIR}/no-pkgconfig)
file(MAKE_DIRECTORY ${no_pkgconfig})
set(ENV{PKG_CONFIG_LIBDIR} ${no_pkgconfig})
set(ENV{PKG_CONFIG_PATH} "")

set(folder ${WORK_DIR}/my-schedule)
file(MAKE_DIRECTORY ${folder})
file(COPY ${example}/CMakeLists.txt ${example}/one_f_one_b_warmup.cpp DESTINATION ${folder})

set(configure_args -S ${folder} -B ${folder}/build -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${prefix}
                   -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${BUILD_TYPE})
if(COMPILER_LAUNCHER)
  list(APPEND configure_args -DCMAKE_CXX_COMPILER_LAUNCHER=${COMPILER_LAUNCHER})
endif()
set(module_linker_flags "-Wl,--no-undefined")
if(SANITIZE)
  list(APPEND configure_args "-DCMAKE_CXX_FLAGS=-fsanitize=address,undefined")
  string(APPEND module_linker_flags " -fsanitize=address,undefined")
endif()
list(APPEND configure_args "-DCMAKE_MODULE_LINKER_FLAGS=${module_linker_flags}")
run_step("configure the plugin" ${CMAKE_COMMAND} ${configure_args})
run_step("build the plugin" ${CMAKE_COMMAND} --build ${folder}/build)

set(plugin ${folder}/build/libbubblesim_1f1b_warmup.so)
set(bubblesim ${prefix}/bin/bubblesim)
run_step("bubblesim --plugin list" ${bubblesim} --plugin ${plugin} list)
if(NOT step_output MATCHES "1f1b-warmup[^\n]*plugin ${plugin} \\(version 1.0.0\\)")
  message(FATAL_ERROR "`bubblesim --plugin ${plugin} list` does not show the plugin:\n${step_output}")
endif()
run_step("bubblesim check-plugin" ${bubblesim} check-plugin ${plugin})
if(NOT step_output MATCHES "1f1b-warmup: contract ok")
  message(FATAL_ERROR "check-plugin did not pass:\n${step_output}")
endif()
message(STATUS "out-of-tree plugin built against ${prefix} and loaded")
