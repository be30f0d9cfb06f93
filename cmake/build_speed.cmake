# Fewer, cheaper translation units for the libraries whose files pay for the same heavy headers.
# CLI11 2.1 (Debian's) is header-only with no compiled mode, so each file that includes it
# generates its code again (about 8 s per file); nlohmann-json costs about 2 s per file. Unity
# batches of 8 files compile those once per batch, and a precompiled nlohmann-json header saves its
# parsing. Measured against the plain build (FLASHPROOF_BUILD_SPEEDUPS=OFF), same machine, same
# commit: results/build_speed_2026-11-28.txt.
# The test executables share one precompiled GoogleTest and nlohmann-json (flashproof_test_pch below).
# On in the sanitizer build of CI's subset too (scripts/sanitized.sh): compiled one file at a time,
# its CLI11 files alone cost about 130 s of CPU there. A file that forgot an include, or compiles
# only beside another file of its batch, is caught by the build with these off:
# `scripts/sanitized.sh all` (label slow) configures -DFLASHPROOF_BUILD_SPEEDUPS=OFF.
option(FLASHPROOF_BUILD_SPEEDUPS "Unity batches and a precompiled nlohmann-json for the header-heavy libraries" ON)

# The libraries built in unity batches. Their files must not define the same internal name: a
# batch would make one file call the other's (test scripts.unity_collisions_*, scripts/unity-collisions).
set(FLASHPROOF_UNITY_TARGETS fp_core fp_harness fp_fuzz fp_report fp_cli)

function(flashproof_build_speedups)
  if(NOT FLASHPROOF_BUILD_SPEEDUPS)
    return()
  endif()
  set(json "$<$<COMPILE_LANGUAGE:CXX>:<nlohmann/json.hpp>>")  # C++ only, never the nvcc objects
  foreach(target fp_core fp_harness fp_fuzz fp_report fp_properties fp_cli)
    target_precompile_headers(${target} PRIVATE ${json})
  endforeach()
  # fp_properties stays one file per unit: its files define same-named helpers in anonymous
  # namespaces (properties/gradient_check.cpp's exact()).
  foreach(target ${FLASHPROOF_UNITY_TARGETS})
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE 8)
  endforeach()
endfunction()

# The precompiled headers every GoogleTest executable (tests/CMakeLists.txt, flashproof_test) reuses:
# built once by a target compiled exactly as they are (an executable linking GoogleTest), since a
# precompiled header is only taken by compiles with the same options. Third-party headers only, so a
# test file's own includes still have to name the project's headers it uses.
function(flashproof_test_pch_target)
  if(NOT FLASHPROOF_BUILD_SPEEDUPS)
    return()
  endif()
  add_executable(flashproof_test_pch ${PROJECT_SOURCE_DIR}/tests/test_pch_anchor.cpp)
  target_link_libraries(flashproof_test_pch PRIVATE GTest::gtest GTest::gtest_main)
  target_precompile_headers(flashproof_test_pch PRIVATE
    "$<$<COMPILE_LANGUAGE:CXX>:<gtest/gtest.h>>" "$<$<COMPILE_LANGUAGE:CXX>:<nlohmann/json.hpp>>")
endfunction()

# TARGET, one of the tests: compiled with the shared precompiled headers when they are on.
function(flashproof_use_test_pch target)
  if(TARGET flashproof_test_pch)
    target_precompile_headers(${target} REUSE_FROM flashproof_test_pch)
  endif()
endfunction()

# The tests' own C++ files are compiled at FLASHPROOF_TEST_OPTIMIZATION, after the build type's
# flags: they are assertions and set-up around the libraries, which keep the build type's
# optimization. Measured (results/ci_time_2026-11-29_test_optimization.txt): -O3 to -O0 took the
# tests' compile from 594 to 256 CPU-s with the same summed ctest time (707 s). The arithmetic is the
# same at any level (-ffp-contract=off, SSE2, no fast-math; docs/testing.md names the one libm caveat).
# The sanitizer build keeps its -O1 for them (default empty there): under ASan and UBSan at -O0 the
# sanitized suites ran twice as long (a harness shard 56 -> 120 s) for 60 CPU-s of test compile.
if(FLASHPROOF_SANITIZE)
  set(_flashproof_test_optimization "")
else()
  set(_flashproof_test_optimization "-O0")
endif()
set(FLASHPROOF_TEST_OPTIMIZATION "${_flashproof_test_optimization}" CACHE STRING
    "Optimization flag of the tests' own C++ files (empty: the build type's)")
function(flashproof_test_optimization)
  if(FLASHPROOF_TEST_OPTIMIZATION)
    add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${FLASHPROOF_TEST_OPTIMIZATION}>")
  endif()
endfunction()

# SOURCE..., test files (of the calling folder) whose own loops are the work, such as walks over
# every n-th fp32 input: compiled at the build type's optimization level all the same (at -O0 these
# ran 2 to 10 times longer, about 25 s of ctest in all), without the shared precompiled header,
# which was made at FLASHPROOF_TEST_OPTIMIZATION and so does not fit them.
function(flashproof_test_sources_optimized)
  if(NOT FLASHPROOF_TEST_OPTIMIZATION)
    return()
  endif()
  string(TOUPPER "${CMAKE_BUILD_TYPE}" config)
  string(REGEX MATCHALL "-O[0-9a-z]*" levels "${CMAKE_CXX_FLAGS} ${CMAKE_CXX_FLAGS_${config}}")
  list(POP_BACK levels level)
  if(level)
    set_source_files_properties(${ARGN} PROPERTIES COMPILE_OPTIONS "${level}" SKIP_PRECOMPILE_HEADERS ON)
  endif()
endfunction()
