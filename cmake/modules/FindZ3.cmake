# Z3's C++ API: Z3_LIBRARY, Z3_INCLUDE_DIR and the target Z3::Z3 (Debian's libz3-dev ships no
# CMake package configuration). Used by the build and by find_package(flashproof) for the proofs.
find_library(Z3_LIBRARY z3)
find_path(Z3_INCLUDE_DIR z3++.h)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(Z3 REQUIRED_VARS Z3_LIBRARY Z3_INCLUDE_DIR)
if(Z3_FOUND AND NOT TARGET Z3::Z3)
  add_library(Z3::Z3 UNKNOWN IMPORTED)
  set_target_properties(Z3::Z3 PROPERTIES IMPORTED_LOCATION "${Z3_LIBRARY}"
                                           INTERFACE_INCLUDE_DIRECTORIES "${Z3_INCLUDE_DIR}")
endif()
