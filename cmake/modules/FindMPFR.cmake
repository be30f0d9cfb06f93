# MPFR, which ships no CMake package: MPFR_LIBRARY, MPFR_INCLUDE_DIR and the target MPFR::MPFR.
# Used by the build and, installed beside flashproofConfig.cmake, by find_package(flashproof).
include(${CMAKE_CURRENT_LIST_DIR}/plain_library.cmake)
find_plain_library(MPFR mpfr mpfr.h)
