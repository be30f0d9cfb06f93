// The command line of bench_flash (flash_bench.cpp): which kernels, directions, dtypes and shapes
// to measure, and how often. Parsing throws BenchUsageError with a one-line message; main prints
// it and exits 2.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "kernels/flash/api.h"

namespace flashproof::bench {

struct BenchUsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

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
  bool help = false;
};

inline constexpr const char* kBenchUsage =
    "usage: bench_flash [options]\n"
    "  --target gpu|emulated      where the kernels run (default gpu; emulated times mean nothing)\n"
    "  --kernels fa2,fa1          kernels to time (default both)\n"
    "  --directions fwd,bwd       forward and/or backward (default both)\n"
    "  --dtypes fp16,bf16         (default both)\n"
    "  --head-dims 64,128,256     multiples of 8 up to 256 (default 64,128,256)\n"
    "  --seqlens 512,...,16384    at most 16384 (default 512,1024,2048,4096,8192,16384)\n"
    "  --causal yes|no|both       (default both)\n"
    "  --repeats N                timed calls per measurement (default 30; emulated 2)\n"
    "  --warmup N                 untimed calls first (default 5; emulated 1)\n"
    "  --tiny                     batch 1, 2 heads, seqlens 64,128 unless --seqlens is given\n"
    "  --fa1-query-splits N       fa1_forward's query_splits (default 0 = automatic)\n"
    "  --seed S                   seed of the random normal inputs\n"
    "  --json FILE                write every measurement as a JSON array of objects\n"
    "  --dry-run                  only list the planned rows (shapes, FLOPs; status planned)\n"
    "  --help                     this text\n"
    "Shapes as FlashAttention's benchmark: heads = 2048 / head_dim, batch = 16384 / seqlen.\n";

namespace options_detail {

inline std::vector<std::string> split_list(const std::string& option, const std::string& value) {
  std::vector<std::string> items;
  std::size_t begin = 0;
  while (true) {
    const std::size_t comma = value.find(',', begin);
    const std::string item = value.substr(begin, comma == std::string::npos ? std::string::npos : comma - begin);
    if (item.empty()) throw BenchUsageError(option + ": empty item in '" + value + "'");
    if (std::find(items.begin(), items.end(), item) == items.end()) items.push_back(item);
    if (comma == std::string::npos) return items;
    begin = comma + 1;
  }
}

inline long long parse_integer(const std::string& option, const std::string& text, long long lo, long long hi) {
  long long n = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), n);
  if (error != std::errc{} || end != text.data() + text.size() || n < lo || n > hi)
    throw BenchUsageError(option + ": expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) +
                          "], got '" + text + "'");
  return n;
}

// Every item of a list option must be one of `allowed`.
inline std::vector<std::string> parse_names(const std::string& option, const std::string& value,
                                            const std::vector<std::string>& allowed) {
  std::vector<std::string> names = split_list(option, value);
  for (const std::string& name : names)
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) {
      std::string choices;
      for (const std::string& a : allowed) choices += (choices.empty() ? "" : ", ") + a;
      throw BenchUsageError(option + ": unknown '" + name + "' (choose from " + choices + ")");
    }
  return names;
}

inline std::vector<int> parse_integers(const std::string& option, const std::string& value, int lo, int hi) {
  std::vector<int> numbers;
  for (const std::string& item : split_list(option, value))
    numbers.push_back(static_cast<int>(parse_integer(option, item, lo, hi)));
  return numbers;
}

inline std::vector<int> parse_head_dims(const std::string& option, const std::string& value) {
  std::vector<int> dims = parse_integers(option, value, 8, 256);
  for (int d : dims)
    if (d % 8 != 0) throw BenchUsageError(option + ": head_dim " + std::to_string(d) + " is not a multiple of 8");
  return dims;
}

inline kernels::FlashTarget parse_target(const std::string& option, const std::string& value) {
  if (value == "gpu") return kernels::FlashTarget::gpu;
  if (value == "emulated") return kernels::FlashTarget::emulated;
  throw BenchUsageError(option + ": expected gpu or emulated, got '" + value + "'");
}

inline std::vector<bool> parse_causal(const std::string& option, const std::string& value) {
  if (value == "yes") return {true};
  if (value == "no") return {false};
  if (value == "both") return {false, true};
  throw BenchUsageError(option + ": expected yes, no or both, got '" + value + "'");
}

inline std::vector<kernels::FlashDtype> parse_dtypes(const std::string& option, const std::string& value) {
  std::vector<kernels::FlashDtype> dtypes;
  for (const std::string& name : parse_names(option, value, {"fp16", "bf16"}))
    dtypes.push_back(name == "fp16" ? kernels::FlashDtype::fp16 : kernels::FlashDtype::bf16);
  return dtypes;
}

using Setter = std::function<void(BenchOptions&, const std::string& option, const std::string& value)>;

inline const std::map<std::string, Setter>& value_options() {
  static const std::map<std::string, Setter> setters = {
      {"--target", [](BenchOptions& o, auto& n, auto& v) { o.target = parse_target(n, v); }},
      {"--kernels", [](BenchOptions& o, auto& n, auto& v) { o.kernels = parse_names(n, v, {"fa2", "fa1"}); }},
      {"--directions", [](BenchOptions& o, auto& n, auto& v) { o.directions = parse_names(n, v, {"fwd", "bwd"}); }},
      {"--dtypes", [](BenchOptions& o, auto& n, auto& v) { o.dtypes = parse_dtypes(n, v); }},
      {"--head-dims", [](BenchOptions& o, auto& n, auto& v) { o.head_dims = parse_head_dims(n, v); }},
      {"--seqlens", [](BenchOptions& o, auto& n, auto& v) { o.seqlens = parse_integers(n, v, 1, 1 << 20); }},
      {"--causal", [](BenchOptions& o, auto& n, auto& v) { o.causal = parse_causal(n, v); }},
      {"--repeats", [](BenchOptions& o, auto& n, auto& v) { o.repeats = static_cast<int>(parse_integer(n, v, 1, 100000)); }},
      {"--warmup", [](BenchOptions& o, auto& n, auto& v) { o.warmup = static_cast<int>(parse_integer(n, v, 0, 100000)); }},
      {"--fa1-query-splits",
       [](BenchOptions& o, auto& n, auto& v) { o.fa1_query_splits = static_cast<int>(parse_integer(n, v, 0, 65535)); }},
      {"--seed", [](BenchOptions& o, auto& n, auto& v) { o.seed = static_cast<std::uint64_t>(parse_integer(n, v, 0, INT64_MAX)); }},
      {"--json", [](BenchOptions& o, auto&, auto& v) { o.json_path = v; }},
  };
  return setters;
}

// Full-size shapes need seqlen <= 16384 (batch = 16384 / seqlen >= 1).
inline void check_full_size_seqlens(const BenchOptions& o) {
  if (o.tiny) return;
  for (int n : o.seqlens)
    if (n > kBenchTokens)
      throw BenchUsageError("--seqlens: " + std::to_string(n) + " exceeds " + std::to_string(kBenchTokens) +
                            " tokens (batch = 16384 / seqlen would be 0); use --tiny for free shapes");
}

}  // namespace options_detail

// Accepts "--name value" and "--name=value". The emulator's defaults for --repeats / --warmup and
// --tiny's seqlens apply only where those options are not given.
inline BenchOptions parse_bench_options(int argc, char** argv) {
  using namespace options_detail;
  BenchOptions o;
  std::map<std::string, std::string> given;
  for (int i = 1; i < argc; ++i) {
    std::string name = argv[i], value;
    if (name == "--help" || name == "-h") o.help = true;
    else if (name == "--tiny") o.tiny = true;
    else if (name == "--dry-run") o.dry_run = true;
    else {
      const std::size_t eq = name.find('=');
      if (eq != std::string::npos) value = name.substr(eq + 1), name.resize(eq);
      const auto setter = value_options().find(name);
      if (setter == value_options().end()) throw BenchUsageError("unknown option '" + name + "' (see --help)");
      if (eq == std::string::npos) {
        if (i + 1 >= argc) throw BenchUsageError(name + " needs a value");
        value = argv[++i];
      }
      setter->second(o, name, value);
      given[name] = value;
    }
  }
  if (o.target == kernels::FlashTarget::emulated) {
    if (!given.contains("--repeats")) o.repeats = 2;
    if (!given.contains("--warmup")) o.warmup = 1;
  }
  if (o.tiny && !given.contains("--seqlens")) o.seqlens = {64, 128};
  check_full_size_seqlens(o);
  return o;
}

}  // namespace flashproof::bench
