// The one source of flashproof_test_pch (cmake/build_speed.cmake), the target that builds the
// precompiled GoogleTest and nlohmann-json the test executables reuse. It registers no test.
