// The inputs of one group, a batch entry and kv head with the query heads that share it, as the
// row formulas read them: Q and dO a row at a time, K and V as dense rows of doubles.
#pragma once

#include <cstdint>
#include <vector>

#include "core/generators.h"

namespace flashproof::bounds {

struct GroupInputs {
  const Inputs& in;
  std::int64_t b = 0, hk = 0;
  std::vector<double> keys{}, values{};  // key and value j at j * head_dim (read_kv_rows)
};

}  // namespace flashproof::bounds
