#include "core/output_sample.h"

#include <numeric>

namespace flashproof {

std::int64_t OutputSample::row_count() const {
  return std::accumulate(rows.begin(), rows.end(), std::int64_t{0});
}
std::int64_t OutputSample::col_count() const {
  return std::accumulate(cols.begin(), cols.end(), std::int64_t{0});
}

}  // namespace flashproof
