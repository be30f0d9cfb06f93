// check's command line (cli/check_command.h).
#include "cli/check_command.h"
#include "core/kv_cache.h"

#include "cli/option_values.h"
#include "cli/value_option.h"

#include <string_view>
#include <vector>

namespace flashproof::cli {
namespace {

std::pair<std::int64_t, std::int64_t> parse_window(const std::string& v) {
  const auto comma = v.find(',');
  if (comma == std::string::npos)
    throw UsageError("--window expects L,R (a negative side is unbounded), got '" + v + "'");
  auto side = [](std::string_view s) {
    const auto x = parse_number<std::int64_t>("--window", s);
    return x < 0 ? std::int64_t{-1} : x;
  };
  return {side(std::string_view(v).substr(0, comma)), side(std::string_view(v).substr(comma + 1))};
}

// A packed batch's offsets, "0,3,10": comma-separated integers. Their rules (from 0, non-decreasing,
// ending at the length) are Problem::validate's, so that every route gives the same message.
std::vector<std::int64_t> parse_offsets(const std::string& opt, const std::string& v) {
  std::vector<std::int64_t> offsets;
  for (std::size_t start = 0;;) {
    const std::size_t comma = v.find(',', start);
    offsets.push_back(parse_number<std::int64_t>(opt, std::string_view(v).substr(start, comma - start)));
    if (comma == std::string::npos) return offsets;
    start = comma + 1;
  }
}

std::vector<float> parse_slopes(const std::string& opt, const std::string& v) {
  std::vector<float> slopes;
  for (std::size_t start = 0;;) {
    const std::size_t comma = v.find(',', start);
    slopes.push_back(parse_float(opt, std::string_view(v).substr(start, comma - start)));
    if (comma == std::string::npos) return slopes;
    start = comma + 1;
  }
}

reference::Backend parse_backend(const std::string& v) {
  if (v == "fast") return reference::Backend::fast;
  if (v == "mpfr") return reference::Backend::mpfr;
  if (v == "cpp_bin_float") return reference::Backend::cpp_bin_float;
  throw UsageError("unknown reference backend '" + v + "' (fast, mpfr, cpp_bin_float)");
}

Distribution parse_dist(const std::string& v) {
  if (const auto d = parse_distribution(v)) return *d;
  std::string names;
  for (const auto& n : distribution_names()) names += (names.empty() ? "" : ", ") + n;
  throw UsageError("unknown distribution '" + v + "' (" + names + ")");
}

}  // namespace

void add_check_options(CLI::App& verb, CheckCommand& into) {
  Case& c = into.c;
  Problem& p = c.problem;
  p.seqlen_q = 128;
  p.seqlen_k = 128;
  p.head_dim = 64;
  reference::Options& ref = into.options.reference;
  using S = const std::string&;
  add_value_option(verb, "--impl", "NAME", "the implementation to check (default naive; see `flashproof list`)",
                   [&](S, S v) { c.impl = v; });
  add_value_option(verb, "--dtype", "fp16|bf16|fp32", "the inputs' and outputs' type (default fp16)", [&](S, S v) {
    const auto t = parse_dtype(v);
    if (!t) throw UsageError("unsupported dtype '" + v + "' (fp16, bf16, fp32)");
    p.dtype = *t;
  });
  add_value_option(verb, "--batch", "N", "the batch size (default 1; with --cache-seqlens, their count)",
                   [&](S n, S v) { p.batch = parse_count(n, v), into.batch_given = true; });
  add_value_option(verb, "--heads", "N", "query heads (default 1)", [&](S n, S v) { p.heads_q = parse_count(n, v); });
  add_value_option(verb, "--kv-heads", "N", "key/value heads, dividing --heads (default: as --heads)", [&](S n, S v) {
    p.heads_kv = parse_count(n, v);
    into.kv_heads_given = true;
  });
  add_value_option(verb, "--seqlen-q", "N", "query sequence length (default 128; packed: the total)",
                   [&](S n, S v) { p.seqlen_q = parse_count(n, v), into.seqlen_q_given = true; });
  add_value_option(verb, "--seqlen-k", "N", "key sequence length (default 128; packed: the total)",
                   [&](S n, S v) { p.seqlen_k = parse_count(n, v), into.seqlen_k_given = true; });
  add_value_option(verb, "--cu-seqlens-q", "0,N,...",
                   "a packed batch: its sequences' query offsets, e.g. 0,3,10 (with --cu-seqlens-k; docs/spec.md)",
                   [&](S n, S v) { p.cu_seqlens_q = parse_offsets(n, v); });
  add_value_option(verb, "--cu-seqlens-k", "0,N,...", "a packed batch: its sequences' key offsets, e.g. 0,5,12",
                   [&](S n, S v) { p.cu_seqlens_k = parse_offsets(n, v); });
  add_value_option(verb, "--cache-seqlens", "N,N,...",
                   "a KV cache: the keys each sequence uses of the --seqlen-k it holds (forward only; docs/spec.md)",
                   [&](S n, S v) { p.cache_seqlens = parse_offsets(n, v); });
  add_value_option(verb, "--page-size", "N", "a paged KV cache: keys per page (a multiple of 16 up to 256)",
                   [&](S n, S v) { p.page_size = parse_count(n, v, Problem::max_page_size); });
  add_value_option(verb, "--num-pages", "N", "the page pool's size (default: one page per block-table entry)",
                   [&](S n, S v) { into.num_pages = parse_count(n, v); });
  add_value_option(verb, "--block-table", "P,P,...|shuffled:SEED",
                   "the pages of each sequence in turn (default: in order), or a seeded shuffle of the pool",
                   [&](S n, S v) {
                     if (v.rfind("shuffled:", 0) == 0)
                       into.shuffle_pages = parse_number<std::uint64_t>(n, std::string_view(v).substr(9));
                     else
                       into.block_table = parse_offsets(n, v);
                   });
  add_value_option(verb, "--seqlen-new", "N",
                   "a KV cache: N new keys per sequence, appended after its --cache-seqlens before attending",
                   [&](S n, S v) { p.seqlen_new = parse_count(n, v); });
  add_value_option(verb, "--num-splits", "N", "split-KV: ask for N splits of the keys (1 to 128; default: the implementation's choice)",
                   [&](S n, S v) { p.num_splits = parse_count(n, v, Problem::max_splits); });
  add_value_option(verb, "--head-dim", "N", "head dimension (default 64)", [&](S n, S v) { p.head_dim = parse_count(n, v); });
  verb.add_flag("--causal", into.causal, "causal mask, aligned bottom-right (the right window side 0)");
  add_value_option(verb, "--window", "L,R", "local attention window, keys i-L .. i+R; a negative side is unbounded",
                   [&](S, S v) { into.window = parse_window(v); });
  add_value_option(verb, "--scale", "S", "softmax scale (default 1/sqrt(head dim))",
                   [&](S n, S v) { p.scale = parse_float(n, v); });
  add_value_option(verb, "--softcap", "C", "soft cap: each scaled logit s becomes C tanh(s / C) (docs/spec.md)",
                   [&](S n, S v) { p.softcap = parse_float(n, v); });
  add_value_option(verb, "--alibi-slopes", "S,S,...|standard",
                   "ALiBi: one slope per query head, or `standard` for the models' 2^(-8 h / heads) (docs/spec.md)",
                   [&](S n, S v) { into.alibi = v == "standard" ? std::vector<float>{} : parse_slopes(n, v), into.alibi_given = true; });
  add_value_option(verb, "--dist", "NAME[:P]", "input distribution, with its parameter (default normal)",
                   [&](S, S v) { c.dist = parse_dist(v); });
  add_value_option(verb, "--seed", "S", "the inputs' seed (default 0)",
                   [&](S n, S v) { c.seed = parse_number<std::uint64_t>(n, v); });
  add_value_option(verb, "--schedule", "SEED", "the emulator's schedule seed for emulated kernels (default 0)",
                   [&](S n, S v) { c.schedule = parse_number<std::uint64_t>(n, v); });
  verb.add_flag("--backward", c.backward, "check the backward pass (dQ, dK, dV) too");
  verb.add_flag("--json", into.json, "print the record as JSON instead of a table");
  verb.add_flag("--require-judged", into.require_judged,
                "exit status 4 when the verdict is not-judged (no rigorous bound judged some tensor) instead of 0");
  add_value_option(verb, "--reference", "fast|mpfr|cpp_bin_float", "the reference's arithmetic (default fast)",
                   [&](S, S v) { ref.backend = parse_backend(v); });
  add_value_option(verb, "--precision", "BITS", "the MPFR precision of the reference and of its fallbacks (64 .. 65536; default 128)",
                   [&](S n, S v) { ref.precision_bits = static_cast<unsigned>(parse_count(n, v, kMaxPrecisionBits)); });
  add_value_option(verb, "--sample", "N", "judge N random rows and columns beside the structured ones (default: every element)",
                   [&](S n, S v) { ref.sample = parse_count(n, v); });
  add_value_option(verb, "--threads", "N", "host threads of the reference (default: every hardware thread)",
                   [&](S n, S v) { ref.threads = static_cast<int>(parse_count(n, v, kMaxThreads)); });
  add_value_option(verb, "--save-case", "FILE", "write the case and its check options to FILE first (docs/case-files.md)",
                   [&](S, S v) {
                     if (v.empty()) throw UsageError("--save-case needs a file name");
                     into.save_case = v;
                   });
  add_case_limit_options(verb, into.limits);
}

void finish_check_options(CheckCommand& command) {
  Problem& p = command.c.problem;
  if (!command.kv_heads_given) p.heads_kv = p.heads_q;
  // A packed batch's tensors are as long as its totals; lengths given anyway must match them, which
  // the problem's validation below says with both numbers.
  if (!p.cu_seqlens_q.empty() && !command.seqlen_q_given) p.seqlen_q = p.cu_seqlens_q.back();
  if (!p.cu_seqlens_k.empty() && !command.seqlen_k_given) p.seqlen_k = p.cu_seqlens_k.back();
  if (command.alibi_given) p.alibi_slopes = command.alibi.empty() ? standard_alibi_slopes(p.heads_q) : command.alibi;
  if (!p.cache_seqlens.empty() && !command.batch_given) p.batch = static_cast<std::int64_t>(p.cache_seqlens.size());
  // Else validate() names the length, or the cache's size where the table would be that large.
  if (p.page_size > 0 && p.seqlen_k % p.page_size == 0 && p.batch <= Problem::max_elements / p.seqlen_k) {
    const std::int64_t entries = p.batch * (p.seqlen_k / p.page_size);
    p.num_pages = command.num_pages > 0 ? command.num_pages : entries;
    // A pool past K's element limit gets no table: the validation names it, nothing is allocated.
    if (!command.block_table.empty())
      p.block_table = command.block_table;
    else if (p.num_pages <= Problem::max_elements / p.page_size)
      p.block_table = page_table(p.batch, p.seqlen_k / p.page_size, p.num_pages, command.shuffle_pages);
  } else if (command.num_pages > 0 || !command.block_table.empty() || command.shuffle_pages != 0) {
    throw UsageError("--num-pages and --block-table need --page-size (a paged KV cache)");
  }
  if (command.window) {
    p.window_left = command.window->first;
    p.window_right = command.window->second;
  }
  if (command.causal) {
    if (command.window && command.window->second != 0)
      throw UsageError("--causal means a right window side of 0, but --window gives " +
                       std::to_string(command.window->second));
    p.window_right = 0;
  }
  if (const std::string e = p.validate(); !e.empty()) throw UsageError(e);
}

}  // namespace flashproof::cli
