// The macro given a null factory: the program must stop before main with one line and status 2
// (test_implementation_tests runs it).
#include "testing/implementation_tests.h"

FLASHPROOF_TEST_IMPLEMENTATION(NullFactory, nullptr);
