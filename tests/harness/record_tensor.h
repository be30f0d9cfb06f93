// A check record's tensor by name ("O", "LSE", "dQ", "dK", "dV"), for the tests that read records.
#pragma once

#include <stdexcept>
#include <string>

#include "harness/check.h"

namespace flashproof::test_impls {

inline const TensorCheck& tensor(const CheckRecord& r, const std::string& name) {
  for (const TensorCheck& t : r.tensors)
    if (t.name == name) return t;
  throw std::runtime_error("no tensor " + name);
}

}  // namespace flashproof::test_impls
