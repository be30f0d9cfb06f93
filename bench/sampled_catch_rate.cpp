// How often a sampled check catches each deliberately broken variant of the naive baseline
// (kernels/naive: NaiveFlaw, and one with a single wrong interior row), beside a full check of the same cases: what judging a sample costs in
// caught bugs (docs/fuzz.md, "Sampled checks"). Cases are seeded shapes large enough that the sample
// (--sample N random rows and columns plus the structured ones) leaves most outputs out: sequence
// lengths log-uniform in [256, 2048], head dims 32/64/128, GQA, no mask / causal (some with rows that
// see no key) / local windows, forward or backward. A case counts as caught when the check's
// verdict is fail.
//
//   bench_sampled_catch_rate [--cases 20] [--sample 16] [--seed 1] [--flaws a,b,...] [--json FILE]
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "bench/command_line.h"
#include "core/json.h"
#include "bench/run_header.h"
#include "core/rng.h"
#include "harness/check.h"
#include "harness/sample_plan.h"
#include "kernels/naive/naive_attention.h"

using namespace flashproof;

namespace {

std::int64_t log_uniform(Rng& r, std::int64_t lo, std::int64_t hi) {
  const double x = std::exp(std::log(static_cast<double>(lo)) + r.uniform() * std::log(static_cast<double>(hi) / lo));
  return std::min<std::int64_t>(hi, std::max<std::int64_t>(lo, static_cast<std::int64_t>(x)));
}

Case make_case(std::uint64_t seed, std::int64_t index) {
  Rng r(derive(seed, static_cast<std::uint64_t>(index)));
  Case c;
  Problem& p = c.problem;
  p.dtype = r.below(2) ? DType::bf16 : DType::fp16;
  p.seqlen_q = log_uniform(r, 256, 2048);
  p.seqlen_k = log_uniform(r, 256, 2048);
  const std::int64_t dims[] = {32, 64, 128};
  p.head_dim = dims[r.below(3)];
  p.batch = 1 + static_cast<std::int64_t>(r.below(2));
  p.heads_kv = 1 + static_cast<std::int64_t>(r.below(2));
  p.heads_q = p.heads_kv * (1 + static_cast<std::int64_t>(r.below(3)));
  switch (r.below(3)) {
    case 0: break;
    case 1:  // causal; half of these with more queries than keys, so the first rows see no key
      p.window_left = -1, p.window_right = 0;
      if (r.below(2) && p.seqlen_q <= p.seqlen_k) std::swap(p.seqlen_q, p.seqlen_k);
      if (p.seqlen_q == p.seqlen_k) p.seqlen_q += 17;
      break;
    default:
      p.window_left = static_cast<std::int64_t>(r.below(256));
      p.window_right = r.below(2) ? 0 : -1;
  }
  c.seed = r.next();
  c.backward = r.below(2) == 1;
  return c;
}

// The naive baseline with one wrong output row: row seqlen_q / 2 + 3 of the first (batch, head) has 1
// added to its O, a defect confined to one interior row that only a sample holding that row can see.
class OneInteriorRowWrong final : public AttentionImpl {
 public:
  std::string name() const override { return "one-interior-row-wrong"; }
  std::string description() const override { return "naive with 1 added to one interior O row"; }
  std::string where() const override { return "host"; }
  std::string unsupported_reason(const Problem& p, bool b) const override { return naive_->unsupported_reason(p, b); }
  ArithmeticModel arithmetic_model() const override { return ArithmeticModel::naive; }
  void forward(const Problem& p, const ForwardArgs& a) override {
    naive_->forward(p, a);
    const std::int64_t i = p.seqlen_q / 2 + 3;
    if (a.wanted && !a.wanted->row(i)) return;  // not computed, not judged
    for (std::int64_t c = 0; c < p.head_dim; ++c) a.o.set(0, i, 0, c, a.o.get(0, i, 0, c) + 1);
  }
  void backward(const Problem& p, const BackwardArgs& a) override { naive_->backward(p, a); }

 private:
  std::unique_ptr<AttentionImpl> naive_ = make_naive_attention();
};

struct Tally {
  std::string flaw;
  int cases = 0, full = 0, sampled = 0;
  double judged_fraction = 0;  // mean share of query rows the sample judged
};

}  // namespace

int main(int argc, char** argv) {
  std::int64_t cases = 20, sample = 16;
  std::uint64_t seed = 1;
  std::string json_file;
  std::vector<std::string> only;
  std::vector<std::string> names;
  for (const NaiveFlaw flaw : kNaiveFlaws) names.push_back(naive_flaw_name(flaw));
  names.push_back("one-interior-row-wrong");
  bench::CommandLine app{"How often a sampled check catches each deliberately broken variant of the naive baseline, beside "
               "a full check of the same seeded cases (seqlens 256..2048).",
               "bench_sampled_catch_rate"};
  app.integer("--cases", cases, 1, 100000, "cases per variant").show_default();
  app.integer("--sample", sample, 1, std::int64_t{1} << 20, "random query rows and key columns of the sampled check")
      .show_default();
  app.integer("--seed", seed, 0, std::uint64_t{1} << 62, "seed of the cases").show_default();
  std::string all;
  for (const std::string& n : names) all += (all.empty() ? "" : ", ") + n;
  app.list<std::string>("--flaws", only, "only these variants, comma-separated (default all: " + all + ")",
                        bench::name_item(names));
  app.text("--json", json_file, "also write one JSON object per variant to FILE (JSON lines)").type_name("FILE");
  app.parse_or_exit(argc, argv);
  std::vector<Tally> tallies;
  std::vector<std::pair<std::string, std::unique_ptr<AttentionImpl>>> variants;
  for (const NaiveFlaw flaw : kNaiveFlaws) variants.emplace_back(naive_flaw_name(flaw), make_naive_attention(flaw));
  variants.emplace_back("one-interior-row-wrong", std::make_unique<OneInteriorRowWrong>());
  for (auto& [name, broken] : variants) {
    if (!only.empty() && std::find(only.begin(), only.end(), name) == only.end()) continue;
    Tally t{name};
    for (std::int64_t k = 0; k < cases; ++k) {
      Case c = make_case(seed, k);
      c.impl = broken->name();
      CheckOptions full, sampled;
      full.reference.threads = sampled.reference.threads = 0;
      sampled.reference.sample = sample;
      sampled.reference.sample_seed = c.seed;
      const CheckRecord rf = run_check(c, *broken, full);
      const CheckRecord rs = run_check(c, *broken, sampled);
      ++t.cases;
      t.full += rf.verdict == Verdict::fail;
      t.sampled += rs.verdict == Verdict::fail;
      const double rows = static_cast<double>(c.problem.batch * c.problem.heads_q * c.problem.seqlen_q);
      t.judged_fraction += (rs.sampled_rows.empty() ? rows : static_cast<double>(rs.sampled_rows.size())) / rows;
    }
    t.judged_fraction /= t.cases;
    std::fprintf(stderr, "%s: full %d, sampled %d of %d\n", name.c_str(), t.full, t.sampled, t.cases);
    tallies.push_back(t);
  }
  std::printf("bench_sampled_catch_rate: how often a sampled check catches each broken variant\n");
  std::printf("date      %s\n", bench::utc_now().c_str());
  std::printf("commit    %s\n", bench::commit_of(FLASHPROOF_SOURCE_DIR).c_str());
  std::printf("machine   %s\n", bench::cpu_model().c_str());
  std::printf("cases     %lld per variant (seed %llu): seqlens 256..2048, d 32/64/128, GQA, masks, forward or backward; "
              "--sample %lld\n", static_cast<long long>(cases), static_cast<unsigned long long>(seed),
              static_cast<long long>(sample));
  std::printf("load      %s at the end\n", bench::load_average().c_str());
  std::printf("%-30s %6s %12s %14s %14s\n", "variant", "cases", "full: fail", "sampled: fail", "rows judged");
  for (const Tally& t : tallies)
    std::printf("%-30s %6d %12d %14d %13.1f%%\n", t.flaw.c_str(), t.cases, t.full, t.sampled, 100 * t.judged_fraction);
  if (!json_file.empty()) {
    std::ofstream out(json_file);
    for (const Tally& t : tallies) {
      const json::Value tally = {{"variant", t.flaw},        {"cases", t.cases},   {"full_fail", t.full},
                                 {"sampled_fail", t.sampled}, {"sample", sample}, {"rows_judged", t.judged_fraction}};
      out << json::write(tally, json::one_line(json::Digits::g6)) << "\n";
    }
    if (!out) {
      std::cerr << "bench_sampled_catch_rate: cannot write " << json_file << "\n";
      return 2;
    }
  }
  return 0;
}
