// bench_reference: throughput of plain double attention (uncertified), the certified reference's
// fast path and its pure MPFR path, forward and backward, as a ratio table (one head, batch 1,
// fp16 normal inputs). Targets (docs/spec.md, "Performance targets"): fast >= 0.5x plain double, >= 50x MPFR.
//
// Fairness: plain and fast both run single-threaded for the table (the fast path's multithreaded
// times are printed separately) and both include their conversion of the fp16 inputs to dense
// double rows. The full-size MPFR run takes minutes, so its time is extrapolated by work (printed
// with how, next to the same scaling measured on the double paths).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "bench/benchmark_runs.h"
#include "bench/command_line.h"
#include "bench/plain_double_attention.h"
#include "bench/run_header.h"
#include "core/generators.h"
#include "reference/reference.h"

namespace fp = flashproof;
namespace ref = flashproof::reference;

namespace {

struct Config {
  std::int64_t seqlen = 1024, head_dim = 128;
  int reps = 3;
  int threads = 0;  // multithreaded certified run (0: all hardware threads)
};

constexpr std::uint64_t kSeed = 20261120;
constexpr std::int64_t kMpfrRows = 16;  // sampled query rows of the MPFR forward

Config parse(int argc, char** argv) {
  Config c;
  fp::bench::CommandLine app{"Throughput of plain double attention, the certified reference's fast path and its pure MPFR "
               "path, forward and backward, as a ratio table (one head, fp16 normal inputs).",
               "bench_reference"};
  app.integer("--seqlen", c.seqlen, 4, 1 << 20, "seqlen_q = seqlen_k").show_default();
  app.integer("--head-dim", c.head_dim, 1, fp::Problem::max_head_dim, "head dimension").show_default();
  app.integer("--reps", c.reps, 1, 1000, "runs of each timed call; the best is reported").show_default();
  app.integer("--threads", c.threads, 0, 4096,
              "threads of the extra multithreaded fast-path line (0: all hardware threads); the ratio "
              "table is single-threaded")
      .show_default();
  app.parse_or_exit(argc, argv);
  return c;
}

// Best wall time of `reps` runs (the least disturbed one), timed by Google Benchmark.
double best_of(const char* name, int reps, const std::function<void()>& f) {
  return fp::bench::least_seconds(name, reps, f);
}

void print_header(const Config& c) {
  std::printf("bench_reference: certified reference throughput (CPU)\n");
  std::printf("date      %s\n", fp::bench::utc_now().c_str());
  std::printf("commit    %s\n", fp::bench::commit_of(FLASHPROOF_SOURCE_DIR).c_str());
  std::printf("machine   %s, %u hardware threads\n", fp::bench::cpu_model().c_str(),
              std::thread::hardware_concurrency());
  std::printf("compiler  %s %s, build type %s, flags '%s'\n", FLASHPROOF_CXX_COMPILER_ID,
              __VERSION__, FLASHPROOF_BUILD_TYPE, FLASHPROOF_CXX_FLAGS);
  std::printf("problem   fp16 batch 1, 1 head, seqlen_q = seqlen_k = %lld, head_dim %lld, no mask, "
              "normal inputs, seed %llu\n", static_cast<long long>(c.seqlen),
              static_cast<long long>(c.head_dim), static_cast<unsigned long long>(kSeed));
  std::printf("load      %s\n", fp::bench::load_average().c_str());
  std::printf("timing    Google Benchmark, wall clock, best of %d runs unless noted; plain and fast single-threaded\n",
              c.reps);
}

fp::Problem make_problem(std::int64_t seqlen, std::int64_t head_dim) {
  fp::Problem p;
  p.seqlen_q = p.seqlen_k = seqlen;
  p.head_dim = head_dim;
  p.dtype = fp::DType::fp16;
  return p;
}

// Largest |a - b| over elements; NaN if any is NaN.
double max_diff(const std::vector<double>& a, const std::vector<double>& b) {
  double m = 0;
  for (std::size_t x = 0; x < a.size(); ++x) {
    const double e = std::fabs(a[x] - b[x]);
    if (!(e <= m)) m = e;
  }
  return m;
}
double max_of(const std::vector<double>& a) { return *std::max_element(a.begin(), a.end()); }

struct Times {
  double plain = 0, fast = 0;
};

// Plain and fast (single-threaded) forward and backward on one problem size.
struct Measured {
  Times fwd, bwd;
  ref::Stats fwd_stats, bwd_stats;
};

Measured measure_double_paths(const fp::Problem& p, const fp::Inputs& in, int reps, bool check) {
  Measured m;
  ref::Options one;
  one.threads = 1;
  fp::bench::PlainForward pf;
  fp::bench::PlainBackward pb;
  ref::ForwardResult rf;
  ref::BackwardResult rb;
  m.fwd.plain = best_of("plain forward", reps, [&] { pf = fp::bench::plain_forward(p, in.q, in.k, in.v); });
  m.fwd.fast = best_of("fast forward", reps, [&] { rf = ref::forward(p, in.q, in.k, in.v, one); });
  m.bwd.plain = best_of("plain backward", reps, [&] { pb = fp::bench::plain_backward(p, in.q, in.k, in.v, in.dout); });
  m.bwd.fast = best_of("fast backward", reps, [&] { rb = ref::backward(p, in.q, in.k, in.v, in.dout, one); });
  m.fwd_stats = rf.stats;
  m.bwd_stats = rb.stats;
  if (check)  // the baseline computes the same thing: its distance to the certified values
    std::printf("check     plain vs certified: max |diff| O %.2e, LSE %.2e, dQ %.2e, dK %.2e, "
                "dV %.2e (largest certified bound: O %.2e, dQ %.2e)\n",
                max_diff(pf.o, rf.o.value), max_diff(pf.lse, rf.lse.value),
                max_diff(pb.dq, rb.dq.value), max_diff(pb.dk, rb.dk.value),
                max_diff(pb.dv, rb.dv.value), max_of(rf.o.bound), max_of(rb.dq.bound));
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  const Config cfg = parse(argc, argv);
  print_header(cfg);
  const fp::Problem p = make_problem(cfg.seqlen, cfg.head_dim);
  const fp::Inputs in = fp::generate_inputs(p, fp::Distribution{}, kSeed);

  // 1. Plain and fast at full size.
  const Measured full = measure_double_paths(p, in, cfg.reps, true);
  std::printf("fallback  fast path MPFR fallbacks: forward %lld rows, backward %lld rows + %lld "
              "columns%s\n", static_cast<long long>(full.fwd_stats.fallback_rows),
              static_cast<long long>(full.bwd_stats.fallback_rows),
              static_cast<long long>(full.bwd_stats.fallback_columns),
              full.fwd_stats.fallback_rows + full.bwd_stats.fallback_rows +
                      full.bwd_stats.fallback_columns == 0 ? "" : "  <-- NOT ZERO");

  // 2. MPFR forward on sampled rows: without a mask every row costs the same (all seqlen_k keys),
  // so two sample sizes give the cost per row and the fixed per-call part (input conversion),
  // and full = fixed + seqlen_q * per row. Checked on the fast path the same way.
  ref::Options mp;
  mp.backend = ref::Backend::mpfr;
  mp.precision_bits = 128;
  mp.threads = 1;
  const std::int64_t rows_a = std::min(kMpfrRows, p.seqlen_q / 2), rows_b = 2 * rows_a;
  auto extrapolate = [&](ref::Options o, int reps, double& ta, double& tb) {  // o by value
    o.sample = rows_a;
    ta = best_of("forward, fewer sampled rows", reps, [&] { ref::forward(p, in.q, in.k, in.v, o); });
    o.sample = rows_b;
    tb = best_of("forward, more sampled rows", reps, [&] { ref::forward(p, in.q, in.k, in.v, o); });
    const double per_row = (tb - ta) / static_cast<double>(rows_b - rows_a);
    return std::max(0.0, ta - rows_a * per_row) + per_row * static_cast<double>(p.seqlen_q);
  };
  double mpfr_a = 0, mpfr_b = 0, fast_a = 0, fast_b = 0;
  const double mpfr_fwd = extrapolate(mp, 1, mpfr_a, mpfr_b);
  ref::Options fast_one;
  fast_one.threads = 1;
  const double fast_fwd_extrap = extrapolate(fast_one, cfg.reps, fast_a, fast_b);

  // 3. MPFR backward on seqlen/4 (all rows and columns; sampling does not cut the backward's
  // work proportionally, as every row is still recomputed for the sampled dK/dV columns), scaled
  // by the work ratio (seqlen_q * seqlen_k); the double paths show the same scaling measured.
  const fp::Problem small = make_problem(std::max<std::int64_t>(1, p.seqlen_q / 4), p.head_dim);
  const fp::Inputs small_in = fp::generate_inputs(small, fp::Distribution{}, kSeed);
  const double work_factor = static_cast<double>(p.seqlen_q * p.seqlen_k) /
                             static_cast<double>(small.seqlen_q * small.seqlen_k);
  const double mpfr_bwd_small = best_of(
      "MPFR backward, seqlen / 4", 1, [&] { ref::backward(small, small_in.q, small_in.k, small_in.v, small_in.dout, mp); });
  const Measured sm = measure_double_paths(small, small_in, cfg.reps, false);
  // MPFR's own scaling one step down (seqlen/8 -> seqlen/4, work ratio 4).
  const fp::Problem tiny = make_problem(std::max<std::int64_t>(1, p.seqlen_q / 8), p.head_dim);
  const fp::Inputs tiny_in = fp::generate_inputs(tiny, fp::Distribution{}, kSeed);
  const double mpfr_bwd_tiny = best_of(
      "MPFR backward, seqlen / 8", 1, [&] { ref::backward(tiny, tiny_in.q, tiny_in.k, tiny_in.v, tiny_in.dout, mp); });

  const double mpfr_bwd = mpfr_bwd_small * work_factor;
  std::printf("\nMPFR (128 bits, 1 thread, 1 run each) is extrapolated by work:\n");
  std::printf("  forward:  %lld and %lld sampled query rows of %lld took %.3f s and %.3f s; fixed + "
              "%lld x per row = %.1f s.\n            Same on the fast path: %.4f s and %.4f s -> "
              "%.3f s, measured in full %.3f s (%.2fx).\n",
              static_cast<long long>(rows_a), static_cast<long long>(rows_b),
              static_cast<long long>(p.seqlen_q), mpfr_a, mpfr_b,
              static_cast<long long>(p.seqlen_q), mpfr_fwd, fast_a, fast_b, fast_fwd_extrap,
              full.fwd.fast, full.fwd.fast / fast_fwd_extrap);
  std::printf("  backward: full backward at seqlen %lld took %.3f s; x %.0f (seqlen_q * seqlen_k "
              "ratio) = %.1f s.\n            Measured %lld -> %lld time factor: plain %.1fx, "
              "fast %.1fx (work ratio %.0fx).\n            MPFR itself %lld -> %lld: %.3f s -> "
              "%.3f s, %.2fx (work ratio %.0fx).\n",
              static_cast<long long>(small.seqlen_q), mpfr_bwd_small, work_factor, mpfr_bwd,
              static_cast<long long>(small.seqlen_q), static_cast<long long>(p.seqlen_q),
              full.bwd.plain / sm.bwd.plain, full.bwd.fast / sm.bwd.fast, work_factor,
              static_cast<long long>(tiny.seqlen_q), static_cast<long long>(small.seqlen_q),
              mpfr_bwd_tiny, mpfr_bwd_small, mpfr_bwd_small / mpfr_bwd_tiny,
              static_cast<double>(small.seqlen_q * small.seqlen_k) /
                  static_cast<double>(tiny.seqlen_q * tiny.seqlen_k));

  // 4. The ratio table. Throughput ratio = time of the other path / time of the fast path.
  std::printf("\n%-9s %12s %12s %18s %11s %11s  %s\n", "", "plain (s)", "fast (s)",
              "MPFR (s)", "fast/plain", "fast/MPFR", "target met (>=0.5x, >=50x)");
  auto row = [](const char* name, double plain, double fast, double mpfr) {
    const double rp = plain / fast, rm = mpfr / fast;
    std::printf("%-9s %12.4f %12.4f %11.1f extrap %10.2fx %10.0fx  %s\n", name, plain, fast, mpfr,
                rp, rm, rp >= 0.5 && rm >= 50 ? "yes" : "NO");
  };
  row("forward", full.fwd.plain, full.fwd.fast, mpfr_fwd);
  row("backward", full.bwd.plain, full.bwd.fast, mpfr_bwd);

  // 5. Multithreaded fast path, for reference (not part of the ratio table).
  ref::Options mt;
  mt.threads = cfg.threads;
  const int nthreads = cfg.threads > 0 ? cfg.threads
                                       : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (nthreads > 1) {
    const double f = best_of("fast forward, threads", cfg.reps, [&] { ref::forward(p, in.q, in.k, in.v, mt); });
    const double b = best_of("fast backward, threads", cfg.reps, [&] { ref::backward(p, in.q, in.k, in.v, in.dout, mt); });
    std::printf("\nfast certified path with %d threads: forward %.4f s (%.2fx its 1-thread time), "
                "backward %.4f s (%.2fx)\n", nthreads, f, full.fwd.fast / f, b, full.bwd.fast / b);
  }
  std::printf("load      %s at the end\n", fp::bench::load_average().c_str());
  return 0;
}
