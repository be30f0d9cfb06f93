# MPFR, which ships no CMake package: MPFR_LIBRARY, MPFR_INCLUDE_DIR and the target MPFR::MPFR.
# Used by the build and, installed beside flashproofConfig.cmake, by find_package(flashproof).
find_library(MPFR_LIBRARY mpfr)
find_path(MPFR_INCLUDE_DIR mpfr.h)
include(FindPackageHandleStandardArgs)
find_package_handle_standard_args(MPFR REQUIRED_VARS MPFR_LIBRARY MPFR_INCLUDE_DIR)
if(MPFR_FOUND AND NOT TARGET MPFR::MPFR)
  add_library(MPFR::MPFR UNKNOWN IMPORTED)
  set_target_properties(MPFR::MPFR PROPERTIES IMPORTED_LOCATION "${MPFR_LIBRARY}"
                                               INTERFACE_INCLUDE_DIRECTORIES "${MPFR_INCLUDE_DIR}")
endif()
