# Install rules: the executable, the libraries a plugin links (bubblesim::table, the table model,
# and bubblesim::units below it), their public headers, and a bubblesimConfig.cmake so that an
# out-of-tree plugin can
#   find_package(bubblesim REQUIRED)
#   target_link_libraries(my_plugin PRIVATE bubblesim::table)
# against a `cmake --install build --prefix PREFIX` tree (docs/plugins.md). Neither the generators
# nor the optimizer are part of the package, so it does not need CBC.
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

install(TARGETS bubblesim RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS bubblesim_units bubblesim_table EXPORT bubblesimTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
# The table model's headers: schedules/ itself, not its generators, passes, optimizer or examples.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/schedules/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/schedules
        FILES_MATCHING PATTERN "*.h" PATTERN "examples" EXCLUDE PATTERN "generators" EXCLUDE
        PATTERN "passes" EXCLUDE PATTERN "optimizer" EXCLUDE PATTERN "builtin_generators.h" EXCLUDE)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/sim/units/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/sim/units
        FILES_MATCHING PATTERN "*.h")
install(FILES ${PROJECT_BINARY_DIR}/generated/schedules/version.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/schedules)

set(BUBBLESIM_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/bubblesim)
install(EXPORT bubblesimTargets NAMESPACE bubblesim:: FILE bubblesimTargets.cmake DESTINATION ${BUBBLESIM_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/bubblesimConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/bubblesimConfig.cmake INSTALL_DESTINATION ${BUBBLESIM_CMAKE_DIR})
# Plugins must match the host's release exactly (the loader checks), hence ExactVersion.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/bubblesimConfigVersion.cmake COMPATIBILITY ExactVersion)
install(FILES ${PROJECT_BINARY_DIR}/bubblesimConfig.cmake ${PROJECT_BINARY_DIR}/bubblesimConfigVersion.cmake
        DESTINATION ${BUBBLESIM_CMAKE_DIR})
