// Campaign throughput (issue 8): a fixed campaign's cases checked the way `flashproof fuzz` checks
// them, with the time split into the implementation, the certified reference, the rigorous bounds
// and the rest (inputs, the naive baseline's run for the regression rule, error metrics, the
// record), against plain double-precision attention (bench/plain_double_attention.h) on the same
// inputs, all single-threaded and measured side by side in one run. Then the same campaign through
// the real runner (a forked child per case, fsync'ed log) for cases per minute.
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
#include <map>
#include <unistd.h>
#include <sstream>
#include <string>

#include "bench/plain_double_attention.h"
#include "fuzz/campaign.h"
#include "kernels/naive/naive_attention.h"
#include "kernels/registry.h"

using namespace flashproof;
using Clock = std::chrono::steady_clock;

namespace {

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

[[noreturn]] void usage(const std::string& why) {
  std::cerr << "bench_campaign: " << why << "\n";
  std::exit(2);
}

}  // namespace

int main(int argc, char** argv) {
  fuzz::CampaignSpec spec;
  spec.impls = {"naive"};
  spec.generator.seed = 1;
  spec.generator.max_seqlen = 256;
  spec.generator.max_work = std::int64_t{1} << 20;
  std::uint64_t cases = 200, repeats = 3;
  std::string json;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(a + " needs a value");
    const std::string v = argv[++i];
    char* end = nullptr;
    const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
    const bool number = !v.empty() && *end == '\0';
    if (a == "--cases" && number && n > 0) cases = n;
    else if (a == "--repeat" && number && n > 0) repeats = n;
    else if (a == "--seed" && number) spec.generator.seed = n;
    else if (a == "--impl") spec.impls = {v};
    else if (a == "--max-seqlen" && number && n > 0) spec.generator.max_seqlen = static_cast<std::int64_t>(n);
    else if (a == "--max-work" && number && n > 0) spec.generator.max_work = static_cast<std::int64_t>(n);
    else if (a == "--json") json = v;
    else usage("bad option or value: " + a + " " + v);
  }
  const std::string impl = spec.impls.front();
  if (find_implementation(impl) == nullptr) usage("unknown implementation " + impl);

  // In-process, single-threaded: what each part of a check costs.
  CheckOptions options;
  options.reference.threads = 1;
  // Each part is the least of its totals over the repeats: this machine is shared, and a part's
  // fastest pass is the closest to its own cost.
  struct Totals {
    double impl = 0, inputs = 0, reference = 0, bounds = 0, checks = 0, total = 0, plain = 0;
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
      if (!find_implementation(impl)->unsupported_reason(c.problem, c.backward).empty()) {
        ++skipped;
        continue;
      }
      auto t0 = Clock::now();
      const CheckRecord r = run_check(c, options);
      t.total += since(t0);
      t.impl += r.seconds_impl;
      t.reference += r.seconds_reference;
      t.bounds += r.seconds_bounds;
      t.checks += r.seconds_checks;
      for (const TensorCheck& tc : r.tensors) elements += tc.errors.count;
      t0 = Clock::now();
      const Inputs in = generate_inputs(c.problem, c.dist, c.seed);
      t.inputs += since(t0);
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
    const double other = t.total - t.impl - t.reference - t.bounds;
    if (rep == 0) {
      best = t;
      by_kind = kinds;
      continue;
    }
    best.impl = std::min(best.impl, t.impl);
    best.inputs = std::min(best.inputs, t.inputs);
    best.reference = std::min(best.reference, t.reference);
    best.bounds = std::min(best.bounds, t.bounds);
    best.checks = std::min(best.checks, t.checks);
    best.plain = std::min(best.plain, t.plain);
    // "other" is what total leaves after the timed parts: keep the repeat where it was least.
    if (other < best.total - best.impl - best.reference - best.bounds)
      best.total = best.impl + best.reference + best.bounds + other;
    for (auto& [kind, k] : by_kind) {
      k.reference = std::min(k.reference, kinds[kind].reference);
      k.plain = std::min(k.plain, kinds[kind].plain);
    }
  }
  const double t_impl = best.impl, t_inputs = best.inputs, t_reference = best.reference,
               t_bounds = best.bounds, t_total = best.total, t_plain = best.plain;
  const double other = t_total - t_impl - t_reference - t_bounds;
  const double harness = t_reference + t_bounds + other;

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
  std::printf("in-process, one thread, each part the least of %llu repeats:\n", static_cast<unsigned long long>(repeats));
  std::printf("  %-38s %9.3f s\n", "implementation under test", t_impl);
  std::printf("  %-38s %9.3f s\n", "certified reference", t_reference);
  std::printf("  %-38s %9.3f s\n", "rigorous bounds", t_bounds);
  std::printf("  %-38s %9.3f s\n", "other (inputs, baseline, metrics)", other);
  std::printf("  %-38s %9.3f s\n", "  of which generating the inputs", t_inputs);
  std::printf("  %-38s %9.3f s   (%lld output elements)\n", "  of which comparing and judging", best.checks,
              static_cast<long long>(elements));
  std::printf("  %-38s %9.3f s\n", "plain double attention, same cases", t_plain);
  std::printf("  (reference + bounds + other) / plain  %9.2f x   (target <= 3)\n", harness / t_plain);
  std::printf("  the same without generating the inputs %8.2f x\n", (harness - t_inputs) / t_plain);
  std::printf("  reference / plain                     %9.2f x\n", t_reference / t_plain);
  std::printf("by kind:  %-18s %6s %12s %12s %10s %14s\n", "kind", "cases", "reference s", "plain s", "ref/plain",
              "MPFR rows");
  for (const auto& [kind, k] : by_kind)
    std::printf("          %-18s %6d %12.3f %12.3f %10.1f %14lld\n", kind.c_str(), k.cases, k.reference, k.plain,
                k.reference / k.plain, static_cast<long long>(k.fallback_rows));
  std::printf("campaign runner (fork per case, fsync per record): %llu records in %.2f s = %.0f cases/min\n",
              static_cast<unsigned long long>(run.run), t_campaign, 60.0 * static_cast<double>(run.run) / t_campaign);
  std::printf("campaign runner, %s + naive-flawed:wrong-lse: %llu records in %.2f s with each case's reference shared, %.2f s without (%.2fx)\n",
              impl.c_str(), static_cast<unsigned long long>(pair_records), t_pair[1], t_pair[0], t_pair[0] / t_pair[1]);
  if (!json.empty()) {
    std::ofstream out(json);
    out << "{\"impl\": \"" << impl << "\", \"seed\": " << spec.generator.seed << ", \"cases\": " << cases << ", \"repeats\": " << repeats
        << ", \"checked\": " << checked << ", \"max_seqlen\": " << spec.generator.max_seqlen
        << ", \"max_work\": " << spec.generator.max_work << ", \"seconds\": {\"impl\": " << t_impl
        << ", \"inputs\": " << t_inputs << ", \"reference\": " << t_reference << ", \"bounds\": " << t_bounds << ", \"other\": " << other
        << ", \"plain_double\": " << t_plain << ", \"campaign_runner\": " << t_campaign
        << "}, \"harness_over_plain\": " << harness / t_plain << ", \"campaign_cases_per_minute\": "
        << 60.0 * static_cast<double>(run.run) / t_campaign << ", \"two_implementations_seconds\": {\"shared\": " << t_pair[1]
        << ", \"unshared\": " << t_pair[0] << "}}\n";
  }
  return 0;
}
