# cmake --install and find_package(flashproof): the static libraries, the headers, the `flashproof`
# command and a CMake package whose targets (namespace flashproof::) a user project links:
#   <prefix>/bin/flashproof
#   <prefix>/lib/libfp_*.a
#   <prefix>/include/flashproof/<folder>/*.h     both "core/x.h" and <flashproof/core/x.h> resolve
#   <prefix>/lib/cmake/flashproof/              config, version, targets, find modules
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# No version is set in project(); this is the package's until one is.
set(FLASHPROOF_PACKAGE_VERSION 0.1.0)
set(FLASHPROOF_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/flashproof)

# The one target most users link: the check pipeline, the property suite, campaigns and reports.
add_library(fp_all INTERFACE)
target_link_libraries(fp_all INTERFACE fp_harness fp_properties fp_fuzz fp_report)

# Library targets and their names under flashproof::. The proofs (Z3) are exported on their own,
# so that a project without Z3 can use the rest.
set(_flashproof_exported
  fp_core core  fp_emu emu  fp_arch arch  fp_flash flash  fp_fa2 fa2  fp_fa1 fa1  fp_kernels kernels
  fp_reference reference  fp_bounds bounds  fp_harness harness  fp_properties properties
  fp_fuzz fuzz  fp_report report  fp_testing testing  fp_all flashproof  flashproof cli)
set(_flashproof_targets)
while(_flashproof_exported)
  list(POP_FRONT _flashproof_exported _target _export_name)
  set_target_properties(${_target} PROPERTIES EXPORT_NAME ${_export_name})
  list(APPEND _flashproof_targets ${_target})
endwhile()
set_target_properties(fp_proofs PROPERTIES EXPORT_NAME proofs)
# The installed command keeps finding the shared libraries it was linked with outside the system's
# directories (the CUDA runtime under /usr/local/cuda, say).
set_target_properties(flashproof PROPERTIES INSTALL_RPATH_USE_LINK_PATH TRUE)

# The headers sit under include/flashproof as in the source tree, so that both the headers' own
# "core/..." includes and a user's <flashproof/core/...> resolve.
set(_flashproof_includes ${CMAKE_INSTALL_INCLUDEDIR}/flashproof ${CMAKE_INSTALL_INCLUDEDIR})
install(TARGETS ${_flashproof_targets} EXPORT flashproofTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${_flashproof_includes})
install(TARGETS fp_proofs EXPORT flashproofProofsTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        INCLUDES DESTINATION ${_flashproof_includes})
install(DIRECTORY core kernels reference bounds harness properties fuzz report proofs testing
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/flashproof FILES_MATCHING PATTERN "*.h")

install(EXPORT flashproofTargets NAMESPACE flashproof:: DESTINATION ${FLASHPROOF_CMAKE_DIR})
install(EXPORT flashproofProofsTargets NAMESPACE flashproof:: DESTINATION ${FLASHPROOF_CMAKE_DIR})
configure_package_config_file(cmake/flashproofConfig.cmake.in ${PROJECT_BINARY_DIR}/flashproofConfig.cmake
                              INSTALL_DESTINATION ${FLASHPROOF_CMAKE_DIR})
# 0.x: a minor version may change the API.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/flashproofConfigVersion.cmake
                                 VERSION ${FLASHPROOF_PACKAGE_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/flashproofConfig.cmake ${PROJECT_BINARY_DIR}/flashproofConfigVersion.cmake
        DESTINATION ${FLASHPROOF_CMAKE_DIR})
install(FILES cmake/modules/FindMPFR.cmake cmake/modules/FindGMP.cmake cmake/modules/FindZ3.cmake
              cmake/modules/plain_library.cmake
        DESTINATION ${FLASHPROOF_CMAKE_DIR}/modules)
