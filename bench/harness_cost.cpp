// The harness's own cost per case against sequence length: one check of a case
// (seqlen_q = seqlen_k = L, head dim d, fp16, forward only and forward + backward) split into the certified
// reference, the rigorous bounds, the naive baseline's run, comparing and judging, beside the
// implementation under test (a second instance of the naive kernel, timed apart) and plain
// double-precision attention on the same inputs (bench/plain_double_attention.h), all on one
// thread, side by side in one run. Each length is checked in full (up to --full-max-seqlen) and
// with a sample (--sample N: N random query rows and key columns plus the structured ones,
// harness/sample_plan.h). The targets: with a fixed sample the harness grows at most linearly (16k
// at most 20x the 1k time); a full check within 8x plain double attention. A sampled backward
// judges dK and dV of its key columns, which need every row's softmax: its reference keeps an
// all-rows pass, quadratic in L (docs/fuzz.md, "Sampled checks"), so backward rows stop at
// --backward-max-seqlen.
//
//   bench_harness_cost [--seqlens 1024,4096,16384,65536] [--head-dim 128] [--sample 64]
//                      [--full-max-seqlen 4096] [--backward-max-seqlen 16384] [--json FILE]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "bench/command_line.h"
#include "bench/plain_double_attention.h"
#include "bench/run_header.h"
#include "core/json.h"
#include "harness/check.h"
#include "kernels/naive/naive_attention.h"

using namespace flashproof;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A run that cannot go on (exit status 2, as for a bad command line).
[[noreturn]] void fail(const std::string& why) {
  std::cerr << "bench_harness_cost: " << why << "\n";
  std::exit(2);
}

struct Row {
  std::int64_t seqlen = 0, sample = 0;  // sample 0: full
  bool backward = false;
  double impl = 0, reference = 0, bounds = 0, baseline = 0, checks = 0, plain = 0;
  std::string verdict, sampling;
  double harness() const { return reference + bounds + baseline + checks; }
};

Row measure(std::int64_t seqlen, std::int64_t head_dim, std::int64_t sample, bool backward, double plain_seconds) {
  Case c;
  c.problem.seqlen_q = c.problem.seqlen_k = seqlen;
  c.problem.head_dim = head_dim;
  c.seed = 1;
  c.backward = backward;
  c.impl = "naive (second instance)";
  CheckOptions opt;
  opt.reference.threads = 1;
  opt.reference.sample = sample;
  opt.reference.sample_seed = 1;
  const auto impl = make_naive_attention();  // not the registry's: the baseline runs apart
  const CheckRecord r = run_check(c, *impl, opt);
  Row row;
  row.seqlen = seqlen;
  row.sample = sample;
  row.backward = backward;
  row.impl = r.seconds_impl;
  row.reference = r.seconds_reference;
  row.bounds = r.seconds_bounds;
  row.baseline = r.seconds_baseline;
  row.checks = r.seconds_checks;
  row.plain = plain_seconds;
  row.verdict = verdict_name(r.verdict);
  row.sampling = r.reference_stats.sampling;
  return row;
}

struct PlainSeconds {
  double forward = 0, both = 0;
};
PlainSeconds plain_attention_seconds(std::int64_t seqlen, std::int64_t head_dim, bool backward) {
  Problem p;
  p.seqlen_q = p.seqlen_k = seqlen;
  p.head_dim = head_dim;
  const Inputs in = generate_inputs(p, Distribution{}, 1);
  PlainSeconds s;
  auto t0 = Clock::now();
  const bench::PlainForward f = bench::plain_forward(p, in.q, in.k, in.v);
  s.forward = s.both = since(t0);
  if (f.o.empty()) fail("plain attention returned nothing");
  if (!backward) return s;
  t0 = Clock::now();
  const bench::PlainBackward b = bench::plain_backward(p, in.q, in.k, in.v, in.dout);
  s.both += since(t0);
  if (b.dq.empty()) fail("plain attention returned nothing");
  return s;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::int64_t> seqlens{1024, 4096, 16384, 65536};
  std::int64_t head_dim = 128, sample = 64, full_max = 4096, backward_max = 16384;
  std::string json_file;
  bench::CommandLine app{"The harness's own cost per case against sequence length: one forward and one forward + backward "
               "check split into its parts, beside the implementation and plain double attention, in full and "
               "sampled, one thread.",
               "bench_harness_cost"};
  constexpr std::int64_t kMaxLength = std::int64_t{1} << 20;
  app.list<std::int64_t>("--seqlens", seqlens, "sequence lengths (seqlen_q = seqlen_k), comma-separated",
                         bench::integer_item<std::int64_t>(1, kMaxLength));
  app.integer("--head-dim", head_dim, 1, Problem::max_head_dim, "head dimension").show_default();
  app.integer("--sample", sample, 1, kMaxLength, "random query rows and key columns of a sampled check").show_default();
  app.integer("--full-max-seqlen", full_max, 0, kMaxLength, "longest length also checked in full").show_default();
  app.integer("--backward-max-seqlen", backward_max, 0, kMaxLength, "longest length with forward + backward rows")
      .show_default();
  app.text("--json", json_file, "also write one JSON object per row to FILE (JSON lines)").type_name("FILE");
  app.parse_or_exit(argc, argv);
  std::vector<Row> rows;
  for (const std::int64_t seqlen : seqlens) {
    // Plain double attention is quadratic; past the full checks' range it is not measured.
    const bool backward = seqlen <= backward_max;
    const PlainSeconds plain = seqlen <= std::max(full_max, backward_max) ? plain_attention_seconds(seqlen, head_dim, backward)
                                                                          : PlainSeconds{};
    for (const bool bwd : {false, true}) {
      if (bwd && !backward) continue;
      if (seqlen <= full_max) rows.push_back(measure(seqlen, head_dim, 0, bwd, bwd ? plain.both : plain.forward));
      rows.push_back(measure(seqlen, head_dim, sample, bwd, bwd ? plain.both : plain.forward));
      std::fprintf(stderr, "seqlen %lld %s done (harness %.1f s sampled)\n", static_cast<long long>(seqlen),
                   bwd ? "backward" : "forward", rows.back().harness());
    }
  }
  std::printf("bench_harness_cost: the harness's cost per case (CPU)\n");
  std::printf("date      %s\n", bench::utc_now().c_str());
  std::printf("commit    %s\n", bench::commit_of(FLASHPROOF_SOURCE_DIR).c_str());
  std::printf("machine   %s\n", bench::cpu_model().c_str());
  std::printf("problem   fp16 batch 1, 1 head, seqlen_q = seqlen_k, head_dim %lld, no mask, normal inputs, seed 1; "
              "seconds on one thread\n", static_cast<long long>(head_dim));
  std::printf("load      %s at the end\n", bench::load_average().c_str());
  std::printf("harness = reference + bounds + baseline + checks; plain: plain double attention of the same "
              "direction(s) (- where not measured); vs first: harness over the first length's with the same "
              "direction and sampling\n");
  std::printf("%8s %9s %8s %9s %9s %9s %9s %9s %9s %9s %10s %9s  %s\n", "seqlen", "direction", "sample", "impl",
              "reference", "bounds", "baseline", "checks", "harness", "plain", "harness/pl", "vs first", "verdict");
  for (const Row& r : rows) {
    const Row* first = nullptr;  // the first length with the same direction and sampling
    for (const Row& f : rows)
      if (f.sample == r.sample && f.backward == r.backward) { first = &f; break; }
    const std::string plain = r.plain > 0 ? std::to_string(r.plain).substr(0, 9) : "-";
    const std::string ratio = r.plain > 0 ? std::to_string(r.harness() / r.plain).substr(0, 6) : "-";
    std::printf("%8lld %9s %8s %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9s %10s %9.2f  %s\n",
                static_cast<long long>(r.seqlen), r.backward ? "fwd+bwd" : "forward",
                r.sample ? std::to_string(r.sample).c_str() : "full", r.impl, r.reference, r.bounds, r.baseline,
                r.checks, r.harness(), plain.c_str(), ratio.c_str(), r.harness() / first->harness(), r.verdict.c_str());
  }
  for (const Row& r : rows)
    if (r.sample) std::printf("sample at %lld (%s): %s\n", static_cast<long long>(r.seqlen),
                              r.backward ? "fwd+bwd" : "forward", r.sampling.c_str());
  if (!json_file.empty()) {
    std::ofstream out(json_file);
    for (const Row& r : rows) {
      const json::Value row = {{"seqlen", r.seqlen},
                               {"backward", r.backward},
                               {"head_dim", head_dim},
                               {"sample", r.sample},
                               {"seconds_impl", r.impl},
                               {"seconds_reference", r.reference},
                               {"seconds_bounds", r.bounds},
                               {"seconds_baseline", r.baseline},
                               {"seconds_checks", r.checks},
                               {"seconds_plain", r.plain},
                               {"verdict", r.verdict},
                               {"reference_sampling", r.sampling}};
      out << json::write(row, json::one_line(json::Digits::g6)) << "\n";
    }
    if (!out) fail("cannot write " + json_file);
  }
  return 0;
}
