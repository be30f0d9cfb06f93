// `flashproof check`: one case of one implementation against the reference, as a table or JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cli/app_fwd.h"

#include "cli/case_limits.h"
#include "harness/check.h"

namespace flashproof::cli {

struct CheckCommand {
  Case c;
  CheckOptions options;
  bool json = false;
  bool require_judged = false;  // --require-judged: not-judged exits 4
  std::string save_case;  // "" when not asked for
  CaseLimits limits;
  // As given; finish_check_options folds them into c.problem.
  bool causal = false, kv_heads_given = false, seqlen_q_given = false, seqlen_k_given = false;
  std::optional<std::pair<std::int64_t, std::int64_t>> window;
  // --alibi-slopes: the slopes given (empty for `standard`, resolved once heads_q is known).
  std::vector<float> alibi;
  bool alibi_given = false;
  // A KV cache (docs/spec.md "KV caches"): --num-pages (0: one page per table entry) and
  // --block-table's entries, or its shuffle seed (0: pages in order), resolved once the sizes are known.
  bool batch_given = false;
  std::int64_t num_pages = 0;
  std::vector<std::int64_t> block_table;
  std::uint64_t shuffle_pages = 0;
};

// Declares check's options on `verb`, bound to `into`.
void add_check_options(CLI::App& verb, CheckCommand& into);
// After parsing: the options that span others (--kv-heads' default, --causal with --window, the
// lengths of a packed batch) and the problem's own validity; throws UsageError (one line).
void finish_check_options(CheckCommand& command);

// Exit status 1 for a failed check, 4 for a not-judged one with --require-judged, else 0.
int run_check_command(const CheckCommand& command);

}  // namespace flashproof::cli
