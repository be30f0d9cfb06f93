// bench_flash: this repository's FlashAttention-2 and -1 kernels timed through their
// public APIs (kernels/fa2/api.h, kernels/fa1/api.h) at FlashAttention's own benchmark shapes, for
// the side-by-side comparison with PyTorch's SDPA backends (torch_sdpa_bench.py and
// compare_flash_torch.py; see README.md).
//
// Shapes and FLOPs as in FlashAttention's benchmarks/benchmark_flash_attention.py: hidden size 2048
// (heads = 2048 / head_dim), batch = 16384 / seqlen; forward FLOPs 4 * batch * heads * seqlen^2 *
// head_dim, halved when causal; backward 2.5x the forward. Each measurement: random normal inputs,
// outputs poisoned (every bit set: NaN in fp16, bf16 and fp32) before the first call and checked
// finite after the last, warm-up calls, then timed calls under Google Benchmark, each between two
// CUDA events (std::chrono on the emulator, whose times only prove that the harness works) and
// reported as its manual time; median, min and spread are Google Benchmark statistics.
//
// Times are those of the API calls, so they include what a call does besides the kernels: FA1's
// forward and both backwards allocate, synchronize and free their fp32 workspace per call.
//
// Exit status: 0 when every measurement ran (skipped head-dim buckets included), 1 when one failed
// or the target cannot run, 2 for a bad command line.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "bench/flash_bench_options.h"
#include "bench/flash_decode_rows.h"
#include "bench/flash_bench_timing.h"
#include "core/dtype.h"
#include "core/json.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "kernels/algo/tile_configs.h"
#include "kernels/fa1/api.h"
#include "kernels/fa2/api.h"

namespace flashproof::bench {
namespace {

using kernels::FlashBuffer;
using kernels::FlashDtype;
using kernels::FlashTarget;
using kernels::FlashTensor;

struct BenchShape {
  int batch = 0, heads = 0, seqlen = 0, head_dim = 0;
  std::size_t elements() const { return static_cast<std::size_t>(batch) * heads * seqlen * head_dim; }
  std::size_t rows() const { return static_cast<std::size_t>(batch) * heads * seqlen; }  // of LSE
};

BenchShape bench_shape(int seqlen, int head_dim, bool tiny) {
  if (tiny) return {1, 2, seqlen, head_dim};
  return {kBenchTokens / seqlen, kBenchHidden / head_dim, seqlen, head_dim};
}

double forward_flops(const BenchShape& s, bool causal) {
  const double full = 4.0 * s.batch * s.heads * static_cast<double>(s.seqlen) * s.seqlen * s.head_dim;
  return causal ? full / 2 : full;
}

// The backward recomputes the scores and does four more matrix products: 2.5x the forward.
double bench_flops(const std::string& direction, const BenchShape& s, bool causal) {
  return direction == "bwd" ? 2.5 * forward_flops(s, causal) : forward_flops(s, causal);
}

const char* dtype_text(FlashDtype d) { return d == FlashDtype::fp16 ? "fp16" : "bf16"; }
const char* target_text(FlashTarget t) { return t == FlashTarget::gpu ? "gpu" : "emulated"; }

struct BenchCase {
  std::string kernel, direction;
  FlashDtype dtype = FlashDtype::fp16;
  BenchShape shape;
  bool causal = false;
};

struct Measurement {
  BenchCase c;
  std::string status = "ok";  // ok, skipped (bucket not built), failed, or planned (--dry-run)
  std::string reason;
  TimeStats time;
  double flops = 0;
  double tflops() const { return flops / (time.median_ms * 1e-3) / 1e12; }
};

// Empty when the kernel serves head_dim in this build, else why not.
std::string bucket_not_built(const std::string& kernel, int head_dim) {
  const bool fa2 = kernel == "fa2";
  const int bucket = fa2 ? algo::head_dim_bucket(head_dim) : algo::fa1_head_dim_bucket(head_dim);
  if (bucket == 0) return kernel + " has no head-dim bucket for " + std::to_string(head_dim);
  if (fa2 ? kernels::fa2_bucket_built(bucket) : kernels::fa1_bucket_built(bucket)) return "";
  return kernel + " head-dim bucket " + std::to_string(bucket) + " is not built (" +
         (fa2 ? "FLASHPROOF_FA2_HEAD_DIMS" : "FLASHPROOF_FA1_HEAD_DIMS") + ")";
}

// ---- target memory: one set of buffers for the largest shape, viewed as each smaller one ----

struct BenchBuffers {
  BenchBuffers(FlashTarget target, std::size_t elements, std::size_t rows)
      : q(target, elements * 2), k(target, elements * 2), v(target, elements * 2), dout(target, elements * 2),
        o(target, elements * 2), dq(target, elements * 2), dk(target, elements * 2), dv(target, elements * 2),
        lse(target, rows * sizeof(float)) {}
  FlashBuffer q, k, v, dout, o, dq, dk, dv, lse;
};

// Contiguous [batch, seqlen, heads, head_dim], the layout of the APIs.
FlashTensor view(const FlashBuffer& b, const BenchShape& s) {
  const std::int64_t d = s.head_dim, h = s.heads, n = s.seqlen;
  return {b.data(), {s.batch, n, h, d}, {n * h * d, h * d, d, 1}};
}

// Standard normal values rounded to dtype; chunks have their own streams so threads can share the work.
std::vector<std::uint16_t> random_normal_bits(FlashDtype dtype, std::size_t n, std::uint64_t seed) {
  std::vector<std::uint16_t> bits(n);
  constexpr std::size_t kChunk = std::size_t{1} << 16;
  parallel_for(static_cast<std::int64_t>((n + kChunk - 1) / kChunk), [&](std::int64_t chunk) {
    Rng rng(derive(seed, static_cast<std::uint64_t>(chunk)));
    const std::size_t begin = static_cast<std::size_t>(chunk) * kChunk, end = std::min(n, begin + kChunk);
    for (std::size_t i = begin; i < end; ++i)
      bits[i] = dtype == FlashDtype::fp16 ? double_to_fp16_bits(rng.normal()) : double_to_bf16_bits(rng.normal());
  });
  return bits;
}

void fill_inputs(BenchBuffers& b, FlashDtype dtype, std::size_t elements, std::uint64_t seed) {
  FlashBuffer* inputs[] = {&b.q, &b.k, &b.v, &b.dout};
  for (std::uint64_t i = 0; i < 4; ++i) {
    const std::vector<std::uint16_t> bits = random_normal_bits(dtype, elements, derive(seed, i));
    inputs[i]->upload(bits.data(), elements * 2);
  }
}

// Every bit set: NaN as fp16, bf16 and fp32, so an element the kernel never writes stays NaN.
void poison(FlashBuffer& b, std::size_t bytes) {
  const std::vector<unsigned char> all_ones(bytes, 0xFF);
  b.upload(all_ones.data(), bytes);
}

std::size_t count_non_finite_16(const FlashBuffer& b, FlashDtype dtype, std::size_t elements) {
  std::vector<std::uint16_t> bits(elements);
  b.download(bits.data(), elements * 2);
  const std::uint16_t exponent = dtype == FlashDtype::fp16 ? 0x7C00 : 0x7F80;
  return static_cast<std::size_t>(
      std::count_if(bits.begin(), bits.end(), [&](std::uint16_t x) { return (x & exponent) == exponent; }));
}

std::size_t count_non_finite_32(const FlashBuffer& b, std::size_t elements) {
  std::vector<float> values(elements);
  b.download(values.data(), elements * sizeof(float));
  return static_cast<std::size_t>(std::count_if(values.begin(), values.end(), [](float x) { return !std::isfinite(x); }));
}

void expect_written(std::size_t non_finite, std::size_t elements, const std::string& what) {
  if (non_finite != 0)
    throw std::runtime_error(what + ": " + std::to_string(non_finite) + " of " + std::to_string(elements) +
                             " elements not finite (unwritten or NaN) after the runs");
}

// ---- the API calls ----

kernels::FlashOptions flash_options(bool causal) {
  kernels::FlashOptions o;
  if (causal) o.window_left = -1, o.window_right = 0;
  return o;
}

kernels::FlashForwardTensors forward_tensors(const BenchBuffers& b, const BenchShape& s) {
  return {view(b.q, s), view(b.k, s), view(b.v, s), view(b.o, s), static_cast<float*>(b.lse.data())};
}

kernels::FlashBackwardTensors backward_tensors(const BenchBuffers& b, const BenchShape& s) {
  return {view(b.q, s),  view(b.k, s),  view(b.v, s),  view(b.o, s), view(b.dout, s),
          view(b.dq, s), view(b.dk, s), view(b.dv, s), static_cast<const float*>(b.lse.data())};
}

std::function<void()> api_call(const BenchCase& c, const BenchOptions& options, const BenchBuffers& b,
                               const std::string& direction) {
  const kernels::FlashOptions flash = flash_options(c.causal);
  if (direction == "fwd") {
    const kernels::FlashForwardTensors t = forward_tensors(b, c.shape);
    if (c.kernel == "fa2") return [=] { kernels::fa2_forward(options.target, c.dtype, t, flash); };
    return [=, splits = options.fa1_query_splits] { kernels::fa1_forward(options.target, c.dtype, t, flash, splits); };
  }
  const kernels::FlashBackwardTensors t = backward_tensors(b, c.shape);
  if (c.kernel == "fa2") return [=] { kernels::fa2_backward(options.target, c.dtype, t, flash); };
  return [=] { kernels::fa1_backward(options.target, c.dtype, t, flash); };
}

void poison_forward_outputs(const BenchCase& c, BenchBuffers& b) {
  poison(b.o, c.shape.elements() * 2);
  poison(b.lse, c.shape.rows() * sizeof(float));
}

void expect_forward_outputs_written(const BenchCase& c, const BenchBuffers& b) {
  expect_written(count_non_finite_16(b.o, c.dtype, c.shape.elements()), c.shape.elements(), "o");
  expect_written(count_non_finite_32(b.lse, c.shape.rows()), c.shape.rows(), "lse");
}

// The forward's O and LSE, which are also the backward's inputs, checked written.
void run_forward_checked(const BenchCase& c, const BenchOptions& options, BenchBuffers& b) {
  poison_forward_outputs(c, b);
  api_call(c, options, b, "fwd")();
  wait_for_target(options.target);
  expect_forward_outputs_written(c, b);
}

// Warm-up calls, then `repeats` calls under Google Benchmark, each timed alone by CallTimer and
// handed to it as the call's manual time.
TimeStats timed_runs(const std::function<void()>& call, const BenchOptions& options) {
  for (int i = 0; i < options.warmup; ++i) call();
  wait_for_target(options.target);
  CallTimer timer(options.target);
  const BenchmarkRuns runs = run_benchmark(
      "bench_flash row", options.repeats,
      [&](benchmark::State& state) { state.SetIterationTime(timer.milliseconds(call) / 1e3); }, true,
      row_statistics());
  if (!runs.error.empty()) throw std::runtime_error(runs.error);
  return time_stats(runs);
}

TimeStats time_forward(const BenchCase& c, const BenchOptions& options, BenchBuffers& b) {
  poison_forward_outputs(c, b);
  const TimeStats times = timed_runs(api_call(c, options, b, "fwd"), options);
  expect_forward_outputs_written(c, b);
  return times;
}

TimeStats time_backward(const BenchCase& c, const BenchOptions& options, BenchBuffers& b) {
  run_forward_checked(c, options, b);
  const std::size_t n = c.shape.elements();
  for (FlashBuffer* grad : {&b.dq, &b.dk, &b.dv}) poison(*grad, n * 2);
  const TimeStats times = timed_runs(api_call(c, options, b, "bwd"), options);
  expect_written(count_non_finite_16(b.dq, c.dtype, n), n, "dq");
  expect_written(count_non_finite_16(b.dk, c.dtype, n), n, "dk");
  expect_written(count_non_finite_16(b.dv, c.dtype, n), n, "dv");
  return times;
}

Measurement measure(const BenchCase& c, const BenchOptions& options, BenchBuffers& b) {
  Measurement m;
  m.c = c;
  m.flops = bench_flops(c.direction, c.shape, c.causal);
  if (std::string why = bucket_not_built(c.kernel, c.shape.head_dim); !why.empty()) {
    m.status = "skipped", m.reason = why;
    return m;
  }
  try {
    m.time = c.direction == "fwd" ? time_forward(c, options, b) : time_backward(c, options, b);
  } catch (const std::exception& e) {
    m.status = "failed", m.reason = e.what();
  }
  return m;
}

// ---- what was run where: printed, and repeated in every JSON object ----

struct RunInfo {
  DeviceInfo device;
  std::string commit;
};

std::string shell_line(const std::string& command) {
  std::string out;
  if (FILE* p = popen(command.c_str(), "r")) {
    char buffer[256];
    while (std::fgets(buffer, sizeof buffer, p) != nullptr) out += buffer;
    pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// FLASHPROOF_COMMIT wins (a copied tree without .git, a script that knows better), then git.
std::string source_commit() {
  if (const char* given = std::getenv("FLASHPROOF_COMMIT"); given != nullptr && *given != '\0') return given;
  const std::string git = "git -C '" + std::string(FLASHPROOF_SOURCE_DIR) + "' ";
  std::string commit = shell_line(git + "rev-parse HEAD 2>/dev/null");
  if (commit.empty()) return "unknown";
  if (!shell_line(git + "status --porcelain --untracked-files=no 2>/dev/null").empty()) commit += "-dirty";
  return commit;
}

// ---- output ----

// A row as JSON: times to 9 significant digits, null where the row did not run or a time is not
// finite; the FLOP count (a whole number below 2^53) exactly.
json::Value json_row(const Measurement& m, const BenchOptions& options, const RunInfo& info) {
  const bool ok = m.status == "ok";
  const auto timed = [&](double x) { return ok && std::isfinite(x) ? json::Value(x) : json::Value(nullptr); };
  json::Value row = json::Value::object();
  row["tool"] = "bench_flash";
  row["kernel"] = m.c.kernel;
  row["direction"] = m.c.direction;
  row["dtype"] = dtype_text(m.c.dtype);
  row["head_dim"] = m.c.shape.head_dim;
  row["seqlen"] = m.c.shape.seqlen;
  row["batch"] = m.c.shape.batch;
  row["heads"] = m.c.shape.heads;
  row["causal"] = m.c.causal;
  row["status"] = m.status;
  row["reason"] = m.reason.empty() ? json::Value(nullptr) : json::Value(m.reason);
  row["median_ms"] = timed(m.time.median_ms);
  row["min_ms"] = timed(m.time.min_ms);
  row["max_ms"] = timed(m.time.max_ms);
  row["spread_pct"] = timed(m.time.spread_pct);
  row["flops"] = static_cast<std::uint64_t>(std::llround(m.flops));
  row["tflops"] = timed(ok ? m.tflops() : 0);
  row["repeats"] = options.repeats;
  row["warmup"] = options.warmup;
  row["target"] = target_text(options.target);
  row["device"] = info.device.name;
  row["driver_version"] = info.device.driver_version;
  row["runtime_version"] = info.device.runtime_version;
  row["commit"] = info.commit;
  return row;
}

// A decode row (bench/flash_decode_rows.h) as JSON: the call's K/V bytes, the bandwidth they imply
// and the static read counts beside the times.
json::Value json_decode_row(const DecodeRow& r, const BenchOptions& options, const RunInfo& info) {
  const bool ok = r.status == "ok";
  const auto timed = [&](double x) { return ok && std::isfinite(x) ? json::Value(x) : json::Value(nullptr); };
  json::Value row = json::Value::object();
  row["tool"] = "bench_flash";
  row["kernel"] = "fa2";
  row["direction"] = "decode";
  row["dtype"] = dtype_text(r.dtype);
  row["head_dim"] = r.shape.head_dim;
  row["batch"] = r.shape.batch;
  row["cache_seqlen"] = r.shape.cache;
  row["page_size"] = r.shape.page;
  row["heads_q"] = r.shape.heads_q;
  row["heads_kv"] = r.shape.heads_kv;
  row["num_splits"] = r.reads.num_splits;
  row["group_packed"] = r.reads.group_packed;
  row["status"] = r.status;
  row["reason"] = r.reason.empty() ? json::Value(nullptr) : json::Value(r.reason);
  row["median_ms"] = timed(r.time.median_ms);
  row["min_ms"] = timed(r.time.min_ms);
  row["spread_pct"] = timed(r.time.spread_pct);
  row["kv_bytes"] = static_cast<std::uint64_t>(std::llround(r.shape.kv_bytes()));
  row["gb_per_s"] = timed(ok ? r.gb_per_s() : 0);
  row["kv_read_once_fraction"] = r.reads.read_once;
  row["kv_reads_per_key"] = r.reads.reads_per_key;
  row["repeats"] = options.repeats;
  row["warmup"] = options.warmup;
  row["target"] = target_text(options.target);
  row["device"] = info.device.name;
  row["commit"] = info.commit;
  return row;
}

// A JSON array, one row per line.
void write_json(const std::string& path, const std::vector<Measurement>& ms, const BenchOptions& options,
                const RunInfo& info, const std::vector<DecodeRow>& decode = {}) {
  json::Value rows = json::Value::array();
  for (const Measurement& m : ms) rows.push_back(json_row(m, options, info));
  for (const DecodeRow& r : decode) rows.push_back(json_decode_row(r, options, info));
  json::Layout layout;
  layout.indented = true;
  layout.inner = {{"*", json::one_line(json::Digits::g9)}};
  std::ofstream out(path);
  out << json::write(rows, layout) << "\n";
  if (!out.flush()) throw std::runtime_error("cannot write " + path);
}

std::string progress_line(const Measurement& m) {
  const BenchCase& c = m.c;
  char text[256];
  std::snprintf(text, sizeof text, "%s %s %s d=%d seqlen=%d%s: ", c.kernel.c_str(), c.direction.c_str(),
                dtype_text(c.dtype), c.shape.head_dim, c.shape.seqlen, c.causal ? " causal" : "");
  if (m.status != "ok") return text + m.status + " (" + m.reason + ")";
  char result[96];
  std::snprintf(result, sizeof result, "%.4f ms, %.2f TFLOP/s", m.time.median_ms, m.tflops());
  return text + std::string(result);
}

void print_header(const BenchOptions& options, const RunInfo& info) {
  std::printf("bench_flash: FlashAttention kernels through their APIs\n");
  std::printf("target    %s, %s\n", target_text(options.target), info.device.name.c_str());
  std::printf("versions  driver %s, runtime %s\n", info.device.driver_version.c_str(),
              info.device.runtime_version.c_str());
  std::printf("commit    %s\n", info.commit.c_str());
  std::printf("timing    %d warm-up + %d timed calls per row, %s; median, min, spread = IQR / median\n",
              options.warmup, options.repeats,
              options.target == FlashTarget::gpu ? "CUDA events" : "std::chrono");
  std::printf("shapes    %s\n", options.tiny ? "tiny: batch 1, 2 heads"
                                             : "heads = 2048 / head_dim, batch = 16384 / seqlen");
  if (options.target == FlashTarget::emulated)
    std::printf("note      emulated times are meaningless for performance: they only prove the harness works\n");
  std::fflush(stdout);
}

// Each failure on its own line; a skip once per reason (a missing bucket skips many rows).
void print_notes(const std::vector<Measurement>& ms) {
  std::map<std::string, int> skips;
  for (const Measurement& m : ms) {
    if (m.status == "failed") std::printf("FAILED    %s\n", progress_line(m).c_str());
    if (m.status == "skipped") ++skips[m.reason];
  }
  for (const auto& [reason, rows] : skips) std::printf("note      skipped %d rows: %s\n", rows, reason.c_str());
}

void print_table(const std::vector<Measurement>& ms) {
  std::printf("\n%-4s %-4s %-5s %-6s %5s %7s %6s %6s %10s %11s %11s %7s %9s\n", "kern", "dir", "dtype", "causal",
              "hdim", "seqlen", "batch", "heads", "GFLOP", "median_ms", "min_ms", "spread", "TFLOP/s");
  for (const Measurement& m : ms) {
    const BenchCase& c = m.c;
    std::printf("%-4s %-4s %-5s %-6s %5d %7d %6d %6d %10.4g ", c.kernel.c_str(), c.direction.c_str(),
                dtype_text(c.dtype), c.causal ? "yes" : "no", c.shape.head_dim, c.shape.seqlen, c.shape.batch,
                c.shape.heads, m.flops / 1e9);
    if (m.status == "ok")
      std::printf("%11.4f %11.4f %6.1f%% %9.2f\n", m.time.median_ms, m.time.min_ms, m.time.spread_pct, m.tflops());
    else
      std::printf("%s\n", m.status.c_str());
  }
}

// ---- the run ----

std::vector<BenchCase> planned_cases(const BenchOptions& o, FlashDtype dtype) {
  std::vector<BenchCase> cases;
  for (int d : o.head_dims)
    for (int n : o.seqlens)
      for (bool causal : o.causal)
        for (const std::string& direction : o.directions)
          for (const std::string& kernel : o.kernels)  // innermost: fa2 and fa1 of a shape side by side
            if (direction != "decode") cases.push_back({kernel, direction, dtype, bench_shape(n, d, o.tiny), causal});
  return cases;
}

std::size_t largest(const BenchOptions& o, std::size_t (BenchShape::*size)() const) {
  std::size_t most = 0;
  for (int d : o.head_dims)
    for (int n : o.seqlens) most = std::max(most, (bench_shape(n, d, o.tiny).*size)());
  return most;
}

bool wants_decode(const BenchOptions& o) {
  return std::count(o.directions.begin(), o.directions.end(), "decode") > 0 &&
         std::count(o.kernels.begin(), o.kernels.end(), "fa2") > 0;
}

std::vector<Measurement> run_all(const BenchOptions& options) {
  if (std::all_of(options.directions.begin(), options.directions.end(), [](const std::string& d) { return d == "decode"; }))
    return {};
  const std::size_t elements = largest(options, &BenchShape::elements);
  BenchBuffers buffers(options.target, elements, largest(options, &BenchShape::rows));
  std::vector<Measurement> done;
  for (FlashDtype dtype : options.dtypes) {
    fill_inputs(buffers, dtype, elements, options.seed);
    for (const BenchCase& c : planned_cases(options, dtype)) {
      done.push_back(measure(c, options, buffers));
      std::fprintf(stderr, "[%zu] %s\n", done.size(), progress_line(done.back()).c_str());
    }
  }
  return done;
}

// --dry-run: the rows a run would measure, without a target to run them on.
std::vector<Measurement> planned_measurements(const BenchOptions& options) {
  std::vector<Measurement> planned;
  for (FlashDtype dtype : options.dtypes)
    for (const BenchCase& c : planned_cases(options, dtype)) {
      Measurement m;
      m.c = c, m.status = "planned";
      m.flops = bench_flops(c.direction, c.shape, c.causal);
      if (std::string why = bucket_not_built(c.kernel, c.shape.head_dim); !why.empty()) m.status = "skipped", m.reason = why;
      planned.push_back(m);
    }
  return planned;
}

int dry_run(const BenchOptions& options) {
  const RunInfo info{{"none (dry run)", "n/a", "n/a"}, source_commit()};
  const std::vector<Measurement> ms = planned_measurements(options);
  const std::vector<DecodeRow> decode = wants_decode(options) ? run_decode_rows(options, {}, true) : std::vector<DecodeRow>{};
  if (!options.json_path.empty()) write_json(options.json_path, ms, options, info, decode);
  print_notes(ms);
  if (!ms.empty()) print_table(ms);
  if (!decode.empty()) print_decode_table(decode);
  return 0;
}

int run(const BenchOptions& options) {
  if (options.dry_run) return dry_run(options);
  if (options.target == FlashTarget::gpu && !kernels::flash_gpu_usable())
    throw std::runtime_error("no usable GPU (needs a CUDA build and an sm_80+ device); try --target emulated");
  const RunInfo info{describe_target(options.target), source_commit()};
  print_header(options, info);
  const std::vector<Measurement> ms = run_all(options);
  std::vector<DecodeRow> decode;
  if (wants_decode(options))
    decode = run_decode_rows(options, [&](const std::function<void()>& call) { return timed_runs(call, options); }, false);
  if (!options.json_path.empty()) write_json(options.json_path, ms, options, info, decode);
  print_notes(ms);
  if (!ms.empty()) print_table(ms);
  if (!decode.empty()) print_decode_table(decode);
  for (const DecodeRow& r : decode)
    if (r.status == "failed") std::printf("FAILED    decode batch %d cache %d page %d: %s\n", r.shape.batch, r.shape.cache, r.shape.page, r.reason.c_str());
  const bool any_failed = std::any_of(ms.begin(), ms.end(), [](const Measurement& m) { return m.status == "failed"; }) ||
                          std::any_of(decode.begin(), decode.end(), [](const DecodeRow& r) { return r.status == "failed"; });
  return any_failed ? 1 : 0;
}

}  // namespace
}  // namespace flashproof::bench

int main(int argc, char** argv) {
  using namespace flashproof::bench;
  const BenchOptions options = parse_bench_options(argc, argv);
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_flash: %s\n", e.what());
    return 1;
  }
}
