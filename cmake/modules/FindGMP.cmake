# GMP (MPFR's integer layer), which ships no CMake package: GMP_LIBRARY, GMP_INCLUDE_DIR and the
# target GMP::GMP. Used by the build and by find_package(flashproof).
include(${CMAKE_CURRENT_LIST_DIR}/plain_library.cmake)
find_plain_library(GMP gmp gmp.h)
