# Z3's C++ API: Z3_LIBRARY, Z3_INCLUDE_DIR and the target Z3::Z3 (Debian's libz3-dev ships no
# CMake package configuration). Used by the build and by find_package(flashproof) for the proofs.
include(${CMAKE_CURRENT_LIST_DIR}/plain_library.cmake)
find_plain_library(Z3 z3 z3++.h)
