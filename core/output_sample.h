// Which outputs a sampled check judges (docs/fuzz.md, "Sampled checks"): the query rows whose O,
// LSE and dQ are compared and the key columns whose dK and dV are. The harness chooses them
// (harness/sample_plan.h) and hands them to the reference, the naive baseline, the bounds and the
// implementation under test, each of which may then skip the work no judged output needs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace flashproof {

struct OutputSample {
  std::vector<std::uint8_t> rows;  // [batch][heads_q][seqlen_q]: 1 where the query row is judged
  std::vector<std::uint8_t> cols;  // [batch][heads_kv][seqlen_k]: 1 where the key column is judged
  // What was judged, in words (reference::Stats::sampling, the record): counts, seed, and the kinds
  // of rows and columns the structured part chose.
  std::string description;
  // The structured part (every kind where bugs sit) apart from the seeded random part, for reports.
  std::int64_t structured_rows = 0, structured_cols = 0;

  bool row(std::int64_t flat) const { return rows[static_cast<std::size_t>(flat)] != 0; }
  bool col(std::int64_t flat) const { return cols[static_cast<std::size_t>(flat)] != 0; }
  std::int64_t row_count() const;
  std::int64_t col_count() const;
  bool any_col() const { return col_count() > 0; }
};

}  // namespace flashproof
