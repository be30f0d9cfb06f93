# Fewer, cheaper translation units for the libraries whose files pay for the same heavy headers.
# CLI11 2.1 (Debian's) is header-only with no compiled mode, so each file that includes it
# generates its code again (about 8 s per file); nlohmann-json costs about 2 s per file. Unity
# batches of 8 files compile those once per batch, and a precompiled nlohmann-json header saves its
# parsing. Measured against the plain build (FLASHPROOF_BUILD_SPEEDUPS=OFF), same machine, same
# commit: results/build_speed_2026-11-28.txt.
# Off under the sanitizers (FLASHPROOF_SANITIZE): that build compiles every file alone, on its own
# includes, so a file that forgot an include, or that only compiles beside another file of its
# batch, still fails there (scripts/test.sh runs it).
option(FLASHPROOF_BUILD_SPEEDUPS "Unity batches and a precompiled nlohmann-json for the header-heavy libraries" ON)

# The libraries built in unity batches. Their files must not define the same internal name: a
# batch would make one file call the other's (test scripts.unity_collisions_*, scripts/unity-collisions).
set(FLASHPROOF_UNITY_TARGETS fp_core fp_harness fp_fuzz fp_report fp_cli)

function(flashproof_build_speedups)
  if(NOT FLASHPROOF_BUILD_SPEEDUPS OR FLASHPROOF_SANITIZE)
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
