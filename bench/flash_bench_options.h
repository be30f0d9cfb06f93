// The command line of bench_flash (flash_bench.cpp), on bench/command_line.h: which
// kernels, directions, dtypes and shapes to measure, and how often.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench/command_line.h"
#include "kernels/flash/api.h"

namespace flashproof::bench {

// FlashAttention's benchmark grid: hidden size 2048 split into 2048 / head_dim heads, and a fixed
// 16384 tokens per batch split into 16384 / seqlen sequences.
inline constexpr int kBenchHidden = 2048;
inline constexpr int kBenchTokens = 16384;

struct BenchOptions {
  kernels::FlashTarget target = kernels::FlashTarget::gpu;
  std::vector<std::string> kernels{"fa2", "fa1"};
  std::vector<std::string> directions{"fwd", "bwd"};
  std::vector<kernels::FlashDtype> dtypes{kernels::FlashDtype::fp16, kernels::FlashDtype::bf16};
  std::vector<int> head_dims{64, 128, 256};
  std::vector<int> seqlens{512, 1024, 2048, 4096, 8192, 16384};
  std::vector<bool> causal{false, true};
  int repeats = 30;  // FlashAttention's benchmark default; the emulator's default is 2
  int warmup = 5;    // the emulator's default is 1
  bool tiny = false;  // batch 1, 2 heads, seqlens 64 and 128: small enough for the emulator
  int fa1_query_splits = 0;  // fa1_forward's query_splits; 0 = automatic
  std::uint64_t seed = 20250609;
  std::string json_path;
  bool dry_run = false;  // list the planned rows with their shapes and FLOPs; run nothing
  // The decode rows' batches and cache lengths (bench/flash_decode_rows.h); empty: its grid.
  std::vector<int> decode_batches, decode_caches;
};

namespace options_detail {

// A head dim: a multiple of 8 up to 256.
inline std::optional<int> head_dim_item(const std::string& text, std::string& why) {
  const std::optional<int> d = integer_in_range(text, 8, 256);
  if (!d) why = not_an_integer_in(text, 8, 256);
  else if (*d % 8 != 0) why = "head_dim " + text + " is not a multiple of 8";
  return d && *d % 8 == 0 ? d : std::nullopt;
}

inline std::optional<kernels::FlashDtype> dtype_item(const std::string& text, std::string& why) {
  if (text == "fp16") return kernels::FlashDtype::fp16;
  if (text == "bf16") return kernels::FlashDtype::bf16;
  why = "unknown '" + text + "' (choose from fp16, bf16)";
  return std::nullopt;
}

// Full-size shapes need seqlen <= 16384 (batch = 16384 / seqlen >= 1).
inline void check_full_size_seqlens(const BenchOptions& o) {
  if (o.tiny) return;
  for (int n : o.seqlens)
    if (n > kBenchTokens)
      throw InvalidOption{"--seqlens", std::to_string(n) + " exceeds " + std::to_string(kBenchTokens) +
                                           " tokens (batch = 16384 / seqlen would be 0); use --tiny for free shapes"};
}

}  // namespace options_detail

// The emulator's defaults for --repeats / --warmup and --tiny's seqlens apply only where those
// options are not given. A bad command line exits 2 with one line; --help exits 0.
inline BenchOptions parse_bench_options(int argc, char** argv) {
  using namespace options_detail;
  BenchOptions o;
  std::string target = "gpu", causal = "both";
  CommandLine app{"This repository's FA2 and FA1 kernels timed through their APIs at FlashAttention's benchmark "
               "shapes, on the GPU or (only to prove the harness works) on the emulator.",
               "bench_flash"};
  app.footer("Shapes as FlashAttention's benchmark: heads = 2048 / head_dim, batch = 16384 / seqlen.");
  app.choice("--target", target, {"gpu", "emulated"}, "where the kernels run (emulated times mean nothing)").show_default();
  app.list<std::string>("--kernels", o.kernels, "kernels to time", name_item({"fa2", "fa1"}));
  app.list<std::string>("--directions", o.directions,
                        "forward and/or backward; decode: FA2's KV-cache rows (bench/flash_decode_rows.h)",
                        name_item({"fwd", "bwd", "decode"}));
  app.list<kernels::FlashDtype>("--dtypes", o.dtypes, "input types", dtype_item).default_text("fp16,bf16");
  app.list<int>("--head-dims", o.head_dims, "multiples of 8 up to 256", head_dim_item);
  app.list<int>("--seqlens", o.seqlens, "at most 16384 (--tiny: 64,128, free)", integer_item(1, 1 << 20));
  app.choice("--causal", causal, {"yes", "no", "both"}, "causal rows, non-causal rows or both").show_default();
  app.integer("--repeats", o.repeats, 1, 100000, "timed calls per measurement (emulated: default 2)").show_default();
  app.integer("--warmup", o.warmup, 0, 100000, "untimed calls first (emulated: default 1)").show_default();
  app.list<int>("--decode-batches", o.decode_batches, "decode rows' batches (default 1,4,16,64)", integer_item(1, 1024));
  app.list<int>("--decode-caches", o.decode_caches, "decode rows' cache lengths, multiples of 256 (default 1k to 128k)",
                [](const std::string& text, std::string& why) -> std::optional<int> {
                  const std::optional<int> n = integer_in_range(text, 256, 1 << 22);
                  if (!n) why = not_an_integer_in(text, 256, 1 << 22);
                  else if (*n % 256 != 0) why = "cache length " + text + " is not a multiple of 256";
                  return n && *n % 256 == 0 ? n : std::nullopt;
                });
  app.flag("--tiny", o.tiny, "batch 1, 2 heads, seqlens 64,128 unless --seqlens is given");
  app.integer("--fa1-query-splits", o.fa1_query_splits, 0, 65535, "fa1_forward's query_splits (0 = automatic)")
      .show_default();
  app.integer("--seed", o.seed, 0, INT64_MAX, "seed of the random normal inputs").show_default();
  app.text("--json", o.json_path, "write every measurement as a JSON array of objects").type_name("FILE");
  app.flag("--dry-run", o.dry_run, "only list the planned rows (shapes, FLOPs; status planned)");
  app.after_parse([&] {
    o.target = target == "gpu" ? kernels::FlashTarget::gpu : kernels::FlashTarget::emulated;
    o.causal = causal == "yes" ? std::vector<bool>{true} : causal == "no" ? std::vector<bool>{false}
                                                                           : std::vector<bool>{false, true};
    if (o.target == kernels::FlashTarget::emulated) {
      if (!app.given("--repeats")) o.repeats = 2;
      if (!app.given("--warmup")) o.warmup = 1;
    }
    if (o.tiny && !app.given("--seqlens")) o.seqlens = {64, 128};
    check_full_size_seqlens(o);
  });
  app.parse_or_exit(argc, argv);
  return o;
}

}  // namespace flashproof::bench
