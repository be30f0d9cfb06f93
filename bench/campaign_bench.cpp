// Campaign throughput (docs/fuzz.md, "Throughput"): a fixed campaign's cases checked the way `flashproof fuzz` checks
// them, with the time split into the implementation, the certified reference, the rigorous bounds,
// generating the inputs, the naive baseline's run for the regression rule (timed separately when
// the implementation is naive itself, as any other implementation pays it), comparing and judging,
// and the rest, against plain double-precision attention (bench/plain_double_attention.h) on the
// same inputs, all on one thread and measured side by side in one run. Then the same campaign
// through the real runner (a forked child per case, fsync'ed log) for cases per minute.
//
//   bench_campaign [--cases N] [--repeat R] [--seed S] [--impl NAME] [--max-seqlen L] [--max-work W] [--json FILE]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <unistd.h>
#include <sstream>
#include <string>

#include "bench/command_line.h"
#include "core/json.h"
#include "bench/plain_double_attention.h"
#include "core/parallel.h"
#include "fuzz/campaign.h"
#include "kernels/naive/naive_attention.h"
#include "kernels/registry.h"

using namespace flashproof;
using Clock = std::chrono::steady_clock;
// The build's FLASHPROOF_CPU_ARCH (CMakeLists.txt), so that the output says what code it timed.
constexpr const char kCpuArch[] = FLASHPROOF_CPU_ARCH;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

int main(int argc, char** argv) {
  fuzz::CampaignSpec spec;
  spec.impls = {"naive"};
  spec.generator.seed = 1;
  spec.generator.max_seqlen = 256;
  spec.generator.max_work = std::int64_t{1} << 20;
  std::uint64_t cases = 200, repeats = 3;
  std::string json_file;
  std::string impl = "naive";
  bench::CommandLine app{"A fixed fuzz campaign checked in-process on one thread, its time split into the implementation, "
               "the certified reference, the rigorous bounds, generating the inputs, the naive baseline, comparing "
               "and judging and the rest, against plain double attention; then the real runner's cases per minute.",
               "bench_campaign"};
  constexpr std::uint64_t kMaxU64 = std::numeric_limits<std::uint64_t>::max();
  constexpr std::int64_t kMaxI64 = std::numeric_limits<std::int64_t>::max();
  app.integer("--cases", cases, 1, kMaxU64, "cases of the campaign").show_default();
  app.integer("--repeat", repeats, 1, kMaxU64, "in-process passes; each part is the least of its totals").show_default();
  app.integer("--seed", spec.generator.seed, 0, kMaxU64, "the campaign's seed").show_default();
  app.text("--impl", impl, "implementation under test (see `flashproof list`)")
      .check([](const std::string& name) { return find_implementation(name) ? "" : "unknown implementation " + name; })
      .show_default();
  app.integer("--max-seqlen", spec.generator.max_seqlen, 1, kMaxI64, "largest generated sequence length").show_default();
  app.integer("--max-work", spec.generator.max_work, 1, kMaxI64, "largest generated case, in multiply-adds").show_default();
  app.text("--json", json_file, "also write the results as one JSON object to FILE").type_name("FILE");
  app.parse_or_exit(argc, argv);
  spec.impls = {impl};

  // In-process, single-threaded (the reference, the bounds, input generation and the naive
  // implementation all take the process default): what each part of a check costs.
  set_default_threads(1);
  CheckOptions options;
  options.reference.threads = 1;
  AttentionImpl& naive = *find_implementation("naive");
  // Each part is the least of its totals over the repeats: this machine is shared, and a part's
  // fastest pass is the closest to its own cost.
  struct Totals {
    double impl = 0, inputs = 0, reference = 0, bounds = 0, baseline = 0, checks = 0, rest = 0, plain = 0;
  };
  Totals best;
  std::uint64_t checked = 0, skipped = 0;
  std::int64_t elements = 0;  // output elements compared, per repeat
  struct KindTime {
    int cases = 0;
    double reference = 0, plain = 0;
    std::int64_t fallback_rows = 0;
  };
  std::map<std::string, KindTime> by_kind;
  for (std::uint64_t rep = 0; rep < repeats; ++rep) {
    Totals t;
    std::map<std::string, KindTime> kinds;
    checked = skipped = 0;
    elements = 0;
    for (std::uint64_t i = 0; i < cases; ++i) {
      const Case c = fuzz::campaign_case(spec, i, impl);
      const std::string kind = fuzz::generate_case(spec.generator, i).kind;
      if (!refusal(*find_implementation(impl), c.problem, c.backward).empty()) {
        ++skipped;
        continue;
      }
      auto t0 = Clock::now();
      const CheckRecord r = run_check(c, options);
      const double total = since(t0);
      t.impl += r.seconds_impl;
      t.reference += r.seconds_reference;
      t.bounds += r.seconds_bounds;
      t.inputs += r.seconds_inputs;
      t.checks += r.seconds_checks;
      t.rest += total - r.seconds_impl - r.seconds_reference - r.seconds_bounds - r.seconds_inputs -
                r.seconds_checks - r.seconds_baseline;
      for (const TensorCheck& tc : r.tensors) elements += tc.errors.count;
      const Inputs in = generate_inputs(c.problem, c.dist, c.seed);
      // The baseline: checking the naive implementation itself reuses its outputs, so time the run
      // a campaign over any other implementation makes.
      if (r.seconds_baseline > 0) {
        t.baseline += r.seconds_baseline;
      } else {
        t0 = Clock::now();
        volatile double sink = static_cast<double>(run_implementation(naive, c.problem, c.backward, in).o.numel());
        (void)sink;
        t.baseline += since(t0);
      }
      t0 = Clock::now();
      volatile double sink = bench::plain_forward(c.problem, in.q, in.k, in.v).o.size();
      if (c.backward) sink = sink + static_cast<double>(bench::plain_backward(c.problem, in.q, in.k, in.v, in.dout).dq.size());
      const double plain = since(t0);
      t.plain += plain;
      KindTime& k = kinds[kind];
      ++k.cases;
      k.reference += r.seconds_reference;
      k.plain += plain;
      k.fallback_rows += r.reference_stats.fallback_rows;
      ++checked;
    }
    if (rep == 0) {
      best = t;
      by_kind = kinds;
      continue;
    }
    for (auto [part, value] : {std::pair{&best.impl, t.impl}, {&best.inputs, t.inputs}, {&best.reference, t.reference},
                               {&best.bounds, t.bounds}, {&best.baseline, t.baseline}, {&best.checks, t.checks},
                               {&best.rest, t.rest}, {&best.plain, t.plain}})
      *part = std::min(*part, value);
    for (auto& [kind, k] : by_kind) {
      k.reference = std::min(k.reference, kinds[kind].reference);
      k.plain = std::min(k.plain, kinds[kind].plain);
    }
  }
  set_default_threads(0);
  const Totals& b = best;
  const double harness = b.reference + b.bounds + b.inputs + b.baseline + b.checks + b.rest;

  // The real runner: a child process per case, the durable log, progress off.
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("bench_campaign_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  spec.cases = cases;
  spec.out = dir.string();
  spec.shrink = false;
  std::ostringstream quiet;
  auto t0 = Clock::now();
  const fuzz::CampaignResult run = fuzz::run_campaign(spec, quiet, false);
  const double t_campaign = since(t0);
  std::filesystem::remove_all(dir);

  // Two implementations (the baseline and a cheap second one), their cases shared and not: what
  // one reference per case saves (fuzz/case_runner.h).
  register_implementation(make_naive_attention(NaiveFlaw::wrong_lse));
  spec.impls = {impl, "naive-flawed:wrong-lse"};
  double t_pair[2] = {0, 0};
  std::uint64_t pair_records = 0;
  for (int shared = 1; shared >= 0; --shared) {
    std::filesystem::remove_all(dir);
    spec.share_cases = shared == 1;
    t0 = Clock::now();
    pair_records = fuzz::run_campaign(spec, quiet, false).run;
    t_pair[shared] = since(t0);
  }
  std::filesystem::remove_all(dir);

  std::printf("campaign: impl %s, seed %llu, %llu cases (%llu checked, %llu unsupported), max_seqlen %lld, max_work %lld\n",
              impl.c_str(), static_cast<unsigned long long>(spec.generator.seed), static_cast<unsigned long long>(cases),
              static_cast<unsigned long long>(checked), static_cast<unsigned long long>(skipped),
              static_cast<long long>(spec.generator.max_seqlen), static_cast<long long>(spec.generator.max_work));
  std::printf("host code: %s\n", kCpuArch[0] ? "-march=" FLASHPROOF_CPU_ARCH : "the compiler's portable default");
  std::printf("in-process, one thread, each part the least of %llu repeats:\n", static_cast<unsigned long long>(repeats));
  std::printf("  %-44s %9.3f s\n", "implementation under test", b.impl);
  std::printf("  %-44s %9.3f s\n", "certified reference", b.reference);
  std::printf("  %-44s %9.3f s\n", "rigorous bounds", b.bounds);
  std::printf("  %-44s %9.3f s\n", "generating the inputs", b.inputs);
  std::printf("  %-44s %9.3f s\n", "naive baseline (rule 3)", b.baseline);
  std::printf("  %-44s %9.3f s   (%lld output elements)\n", "comparing and judging", b.checks,
              static_cast<long long>(elements));
  std::printf("  %-44s %9.3f s\n", "the rest (case setup, records)", b.rest);
  std::printf("  %-44s %9.3f s\n", "plain double attention, same cases", b.plain);
  std::printf("  harness (all but the implementation) / plain  %9.2f x   (target <= 3)\n", harness / b.plain);
  std::printf("  the same without generating the inputs       %9.2f x\n", (harness - b.inputs) / b.plain);
  std::printf("  the same without the baseline               %9.2f x   (a campaign over naive alone)\n",
              (harness - b.baseline) / b.plain);
  std::printf("  reference / plain                            %9.2f x\n", b.reference / b.plain);
  std::printf("by kind:  %-18s %6s %12s %12s %10s %14s\n", "kind", "cases", "reference s", "plain s", "ref/plain",
              "MPFR rows");
  for (const auto& [kind, k] : by_kind)
    std::printf("          %-18s %6d %12.3f %12.3f %10.1f %14lld\n", kind.c_str(), k.cases, k.reference, k.plain,
                k.reference / k.plain, static_cast<long long>(k.fallback_rows));
  std::printf("campaign runner (fork per case, fsync per record): %llu records in %.2f s = %.0f cases/min\n",
              static_cast<unsigned long long>(run.run), t_campaign, 60.0 * static_cast<double>(run.run) / t_campaign);
  std::printf("campaign runner, %s + naive-flawed:wrong-lse: %llu records in %.2f s with each case's reference shared, %.2f s without (%.2fx)\n",
              impl.c_str(), static_cast<unsigned long long>(pair_records), t_pair[1], t_pair[0], t_pair[0] / t_pair[1]);
  if (!json_file.empty()) {
    const json::Value results = {
        {"impl", impl},
        {"cpu_arch", kCpuArch},
        {"seed", spec.generator.seed},
        {"cases", cases},
        {"repeats", repeats},
        {"checked", checked},
        {"output_elements", elements},
        {"max_seqlen", spec.generator.max_seqlen},
        {"max_work", spec.generator.max_work},
        {"seconds",
         {{"impl", b.impl},
          {"reference", b.reference},
          {"bounds", b.bounds},
          {"inputs", b.inputs},
          {"baseline", b.baseline},
          {"checks", b.checks},
          {"rest", b.rest},
          {"plain_double", b.plain},
          {"campaign_runner", t_campaign}}},
        {"harness_over_plain", harness / b.plain},
        {"campaign_cases_per_minute", 60.0 * static_cast<double>(run.run) / t_campaign},
        {"two_implementations_seconds", {{"shared", t_pair[1]}, {"unshared", t_pair[0]}}}};
    std::ofstream out(json_file);
    out << json::write(results, json::one_line(json::Digits::g6)) << "\n";
    if (!out) {
      std::cerr << "bench_campaign: cannot write " << json_file << "\n";
      return 2;
    }
  }
  return 0;
}
