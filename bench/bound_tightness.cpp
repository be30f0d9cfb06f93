// Validation and tightness of the rigorous bound (docs/error-bounds.md Part 2, "Validation"):
// runs generated cases (the property suite's generator) through the harness check for one
// implementation and reports, per dtype and output tensor, the tightness of each case (the largest
// |error| / bound over its elements): median, 90th percentile and maximum over the cases, and
// every case with an element above its bound (a bug in the bound or in the implementation).
//
//   bound_tightness --impl NAME [--cases N] [--seed S] [--max-seqlen L] [--max-work W]
//                   [--seconds T] [--json FILE] [--label TEXT] [--band FILE] [--bound-scale F] [--score-mod]
//                   [--decode [--undeclared-splits]]
// --score-mod gives each case the soft cap and ALiBi slopes that properties::with_score_mod draws.
// --decode draws the campaigns' decode profile instead (KV caches, forced and heuristic split counts;
// fuzz/case_generator.h; --max-seqlen bounds the capacity, default 512); --undeclared-splits judges
// the implementation as though it declared no split-KV (max_key_splits 1): the twin that shows the
// combine's terms of the bound (docs/error-bounds.md (S1)) are needed.
// --seconds stops generating after T seconds and reports the cases run (scripts/gpu-check's budget).
// --band FILE: a committed --json summary of the same run (implementation, cases, seed, limits);
// exit 1 where a tensor's median or p90 of error / bound falls below half of that file's (the
// bounds loosened by 2x or more; a rise shows up as violations). --bound-scale F multiplies every
// rigorous bound by F (CheckOptions::bound_scale): the deliberately loosened (F > 1) and tightened
// (F < 1) bounds that the band's twin tests must see fail (tests/bounds/CMakeLists.txt).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "bench/command_line.h"
#include "core/json.h"
#include "harness/case_file.h"
#include "harness/check.h"
#include "harness/logit_scan.h"
#include "fuzz/case_generator.h"
#include "kernels/registry.h"
#include "properties/generators.h"

using namespace flashproof;

namespace {

struct Options {
  std::string impl, json, label, band;
  double bound_scale = 1;
  bool score_mod = false, decode = false, undeclared_splits = false;
  std::int64_t cases = 1000, max_seqlen = 0, max_work = 0;
  std::int64_t seconds = 0;  // 0: no time limit
  std::uint64_t seed = 1;
};

Options parse(int argc, char** argv) {
  Options o;
  bench::CommandLine app{"Validation and tightness of the rigorous bound: generated cases for one implementation through "
               "the check; per dtype and tensor, the median, 90th percentile and maximum over cases of "
               "max |error| / bound, and the cases above the bound (exit status 1 if any).",
               "bound_tightness"};
  constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
  app.text("--impl", o.impl, "implementation to check (see `flashproof list`)")
      .required()
      .check([](const std::string& name) { return find_implementation(name) ? "" : "unknown implementation '" + name + "'"; });
  app.integer("--cases", o.cases, 1, kMax, "generated cases").show_default();
  app.integer("--seed", o.seed, 1, static_cast<std::uint64_t>(kMax), "seed of the cases").show_default();
  app.integer("--max-seqlen", o.max_seqlen, 1, kMax, "largest sequence length (default: the implementation's limit)");
  app.integer("--max-work", o.max_work, 1, kMax, "largest case in multiply-adds (default: the implementation's limit)");
  app.integer("--seconds", o.seconds, 1, 31 * 24 * 3600, "stop starting cases after this many seconds (default: no limit)");
  app.text("--json", o.json, "also write the summary and the violating cases as JSON to FILE").type_name("FILE");
  app.text("--band", o.band, "fail (exit 1) where a median or p90 falls below half of this committed --json summary's")
      .type_name("FILE");
  app.flag("--score-mod", o.score_mod,
               "give each case a soft cap and ALiBi slopes drawn from its seed, as far as the implementation declares them "
               "(properties::with_score_mod)");
  app.flag("--decode", o.decode, "cases of the campaigns' decode profile (KV caches, split counts)");
  app.flag("--undeclared-splits", o.undeclared_splits,
               "judge as though the implementation never split keys (max_key_splits 1): the (S1) twin");
  app.real("--bound-scale", o.bound_scale, 0x1p-20, 0x1p20, "multiply every rigorous bound by F (the band's twin tests)")
      .type_name("F");
  app.text("--label", o.label, "free text copied into the JSON (e.g. the commit)").type_name("TEXT");
  app.parse_or_exit(argc, argv);
  return o;
}

struct Series {
  std::vector<double> ratios;  // per case: max over elements of |error| / bound
  std::int64_t violations = 0, unbounded_cases = 0, inf_within_bound = 0;
  double worst = 0;
  std::string worst_case;
};

const json::Value& field(const json::Value& v, const char* key) {
  static const json::Value absent;
  const json::Value* f = json::find(v, key);
  return f ? *f : absent;
}

// The tensors of the committed summary that the band test compares against, after checking that it
// describes the same run; exits 2 with a one-line error where it cannot be read or does not.
json::Value read_band(const Options& o, const std::string& impl) {
  std::ifstream f(o.band);
  std::stringstream text;
  if (!(text << f.rdbuf())) {
    std::cerr << "bound_tightness: cannot read --band " << o.band << "\n";
    std::exit(2);
  }
  try {
    const json::Value band = json::parse(text.str());
    const json::Value* tensors = json::find(band, "tensors");
    // "score_mod" was added with --score-mod (2026-11-28): a summary without it was made without.
    const json::Value* score_mod = json::find(band, "score_mod");
    if (json::string(field(band, "impl")) != impl || json::integer(field(band, "cases")) != o.cases ||
        json::unsigned64(field(band, "seed")) != o.seed || (score_mod && score_mod->is_boolean() && score_mod->get<bool>()) != o.score_mod ||
        tensors == nullptr || !tensors->is_array())
      throw std::invalid_argument("not a summary of this implementation, --cases, --seed and --score-mod");
    return *tensors;
  } catch (const std::exception& e) {
    std::cerr << "bound_tightness: --band " << o.band << ": " << e.what() << "\n";
    std::exit(2);
  }
}

// Verdicts by the case's largest visible |scale q.k| (docs/error-bounds.md "Validation and
// tightness"): how much of each logit class the certified tier judges. A tensor is judged when its
// verdict is pass or fail (not not-judged, not out-of-domain); a case when every tensor is.
struct ClassTally {
  std::int64_t cases = 0, judged = 0, baseline_rule = 0, not_judged = 0, out_of_domain = 0, fail = 0;
  std::map<std::string, std::pair<std::int64_t, std::int64_t>> tensors;  // name -> (judged, held)
};

double quantile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

// `base` as it is, but declaring no split-KV (--undeclared-splits).
class WithoutSplits final : public AttentionImpl {
 public:
  explicit WithoutSplits(AttentionImpl& base) : base_(base) {}
  std::string name() const override { return base_.name(); }
  std::string description() const override { return base_.description() + ", split-KV undeclared"; }
  std::string where() const override { return base_.where(); }
  Support declared_support() const override { return base_.declared_support(); }
  std::string unsupported_reason(const Problem& p, bool b) const override { return base_.unsupported_reason(p, b); }
  ArithmeticModel arithmetic_model() const override { return base_.arithmetic_model(); }
  GqaGradientReduction gqa_gradient_reduction() const override { return base_.gqa_gradient_reduction(); }
  bool backward_recomputes_forward_logits() const override { return base_.backward_recomputes_forward_logits(); }
  void forward(const Problem& p, const ForwardArgs& a) override { base_.forward(p, a); }
  void backward(const Problem& p, const BackwardArgs& a) override { base_.backward(p, a); }

 private:
  AttentionImpl& base_;
};

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  AttentionImpl* found = find_implementation(opt.impl);
  if (!found) {
    std::cerr << "bound_tightness: unknown implementation '" << opt.impl << "'\n";
    return 2;
  }
  WithoutSplits without_splits(*found);
  AttentionImpl* impl = opt.undeclared_splits ? &without_splits : found;
  if (opt.decode && !found->declared_support().kv_cache) {
    std::cerr << "bound_tightness: --decode needs an implementation that declares KV caches; " << opt.impl << " does not\n";
    return 2;
  }
  properties::GenLimits limits = properties::limits_for(*impl, true);
  if (opt.max_seqlen) limits.max_seqlen = opt.max_seqlen;
  if (opt.max_work) limits.max_work = opt.max_work;
  const rc::Gen<Case> gen = properties::gen_case(*impl, limits);
  const json::Value band = opt.band.empty() ? json::Value::array() : read_band(opt, impl->name());
  CheckOptions check_options;
  check_options.bound_scale = opt.bound_scale;

  std::map<std::string, Series> series;  // "dtype tensor"
  std::map<std::string, ClassTally> classes;  // logit_class, and "all"
  std::int64_t judged = 0, out_of_domain_inputs = 0, skipped = 0;
  json::Value violating = json::Value::array();  // the case files of the cases above the bound
  const auto start = std::chrono::steady_clock::now();
  std::int64_t ran = 0;
  bool out_of_time = false;
  for (std::int64_t n = 0; n < opt.cases; ++n, ran = n) {
    if (opt.seconds > 0 && std::chrono::steady_clock::now() - start >= std::chrono::seconds(opt.seconds)) {
      out_of_time = true;
      break;
    }
    Case c;
    if (opt.decode) {
      fuzz::GeneratorSettings g;
      g.seed = opt.seed, g.profile = fuzz::Profile::decode;
      if (opt.max_seqlen) g.max_seqlen = opt.max_seqlen;
      c = fuzz::generate_case(g, static_cast<std::uint64_t>(n)).c;
      fit_to_support(c.problem, impl->declared_support());  // pages made contiguous where not declared
    } else {
      c = gen(rc::Random(opt.seed * 1000003 + static_cast<std::uint64_t>(n)), static_cast<int>(n % 101)).value();
    }
    if (opt.score_mod) c = properties::with_score_mod(*impl, c);
    CheckRecord r;
    try {
      r = run_check(c, *impl, check_options);
    } catch (const std::exception& e) {  // e.g. a head-dim bucket not built
      ++skipped;
      continue;
    }
    if (!r.inputs_in_domain) {
      ++out_of_domain_inputs;
      continue;
    }
    ++judged;
    const Inputs inputs = generate_inputs(c.problem, c.dist, c.seed);
    const Problem logical = logical_problem(c.problem);  // a KV cache's inputs are its logical problem's
    for (const char* name : {logit_class(scan_logits(logical, inputs.q, inputs.k, INFINITY).max_visible), "all"}) {
      ClassTally& t = classes[name];
      ++t.cases;
      t.fail += r.verdict == Verdict::fail;
      t.judged += r.verdict == Verdict::pass || r.verdict == Verdict::fail;
      t.not_judged += r.verdict == Verdict::not_judged;
      t.baseline_rule += r.verdict == Verdict::pass_baseline_rule || r.verdict == Verdict::fail_baseline_rule;
      t.fail += r.verdict == Verdict::fail_baseline_rule;
      t.out_of_domain += r.verdict == Verdict::out_of_domain;
      for (const TensorCheck& x : r.tensors) {
        auto& [tensor_judged, held] = t.tensors[x.name];
        ++held;
        tensor_judged += x.verdict == Verdict::pass || x.verdict == Verdict::fail;
      }
    }
    if (r.verdict == Verdict::fail_baseline_rule)
      std::cerr << "bound_tightness: fail (baseline rule): " << c.problem.describe() << " dist=" << distribution_name(c.dist)
                << " seed=" << c.seed << (c.backward ? " backward" : "") << "\n";
    bool violates = false;
    for (const TensorCheck& t : r.tensors) {
      Series& s = series[std::string(dtype_name(c.problem.dtype)) + " " + t.name];
      s.ratios.push_back(t.bound_ratio);
      s.inf_within_bound += t.inf_within_bound;
      if (t.unbounded > 0) ++s.unbounded_cases;
      if (t.above_rigorous_bound > 0) ++s.violations, violates = true;
      if (t.bound_ratio > s.worst || s.worst_case.empty()) {
        s.worst = t.bound_ratio;
        s.worst_case = c.problem.describe() + " dist=" + distribution_name(c.dist) + " seed=" + std::to_string(c.seed);
      }
    }
    if (violates) violating.push_back(case_json(c, CheckOptions{}, "above the rigorous bound", ""));
    if ((n + 1) % 1000 == 0) std::cerr << "bound_tightness: " << (n + 1) << " cases\n";
  }
  if (!out_of_time) ran = opt.cases;

  std::ostringstream text;
  text << "implementation " << impl->name() << " (" << impl->where() << "), " << ran << " cases";
  if (out_of_time) text << " (of " << opt.cases << "; stopped at the " << opt.seconds << " s limit)";
  text << ", seed " << opt.seed << ": " << judged << " judged, " << out_of_domain_inputs << " with inputs out of the domain, "
       << skipped << " not supported\n";
  text << "tensor        cases   median   p90      max       above  unbounded  inf-admitted  worst case\n";
  json::Value summary = {{"impl", impl->name()},
                         {"where", impl->where()},
                         {"label", opt.label},
                         {"cases", ran},
                         {"seed", opt.seed},
                         {"judged", judged},
                         {"inputs_out_of_domain", out_of_domain_inputs},
                         {"skipped", skipped}};
  if (out_of_time) summary["stopped_at_seconds"] = opt.seconds;
  if (opt.score_mod) summary["score_mod"] = true;
  if (opt.decode) summary["decode"] = true;
  if (opt.undeclared_splits) summary["undeclared_splits"] = true;
  json::Value& tensors = summary["tensors"] = json::Value::array();
  for (const auto& [name, s] : series) {
    char line[512];
    std::snprintf(line, sizeof line, "%-12s %6zu  %-8.3g %-8.3g %-9.3g %5lld  %9lld  %12lld  %s\n", name.c_str(),
                  s.ratios.size(), quantile(s.ratios, 0.5), quantile(s.ratios, 0.9), s.worst,
                  static_cast<long long>(s.violations), static_cast<long long>(s.unbounded_cases),
                  static_cast<long long>(s.inf_within_bound), s.worst_case.c_str());
    text << line;
    tensors.push_back({{"tensor", name},
                       {"cases", s.ratios.size()},
                       {"median", quantile(s.ratios, 0.5)},
                       {"p90", quantile(s.ratios, 0.9)},
                       {"max", s.worst},
                       {"above_bound", s.violations},
                       {"unbounded_cases", s.unbounded_cases},
                       {"inf_within_bound", s.inf_within_bound},
                       {"worst_case", s.worst_case}});
  }
  // Verdicts per logit class: the certified tier's reach (judged = pass or fail).
  text << "verdicts by the largest visible |scale q.k| (judged: pass or fail by the rigorous bounds; baseline: by the "
          "second tier alone; not-judged: by neither; fail: either tier)\n"
       << "class        cases  judged  baseline  not-judged  out-of-domain  fail   judged by the bounds, per tensor\n";
  json::Value& by_class = summary["logit_classes"] = json::Value::array();
  std::vector<const char*> class_names(std::begin(kLogitClasses), std::end(kLogitClasses));
  class_names.push_back("all");
  for (const char* name : class_names) {
    const auto it = classes.find(name);
    if (it == classes.end()) continue;
    const ClassTally& t = it->second;
    char line[256];
    std::snprintf(line, sizeof line, "%-10s %7lld %7lld %9lld %11lld %14lld %5lld  ", name, static_cast<long long>(t.cases),
                  static_cast<long long>(t.judged), static_cast<long long>(t.baseline_rule), static_cast<long long>(t.not_judged),
                  static_cast<long long>(t.out_of_domain), static_cast<long long>(t.fail));
    text << line;
    json::Value per_tensor = json::Value::object();
    for (const auto& [tensor, counts] : t.tensors) {
      text << " " << tensor << " " << counts.first << "/" << counts.second;
      per_tensor[tensor] = {{"judged", counts.first}, {"cases", counts.second}};
    }
    text << "\n";
    by_class.push_back({{"class", name},
                        {"cases", t.cases},
                        {"judged", t.judged},
                        {"baseline_rule", t.baseline_rule},
                        {"not_judged", t.not_judged},
                        {"out_of_domain", t.out_of_domain},
                        {"fail", t.fail},
                        {"tensors", per_tensor}});
  }
  // The band: each committed tensor's median and p90 against this run's (0 committed: no lower edge).
  std::int64_t below_band = 0;
  for (const json::Value& b : band) {
    const std::string name = json::string(field(b, "tensor")).value_or("");
    const auto s = series.find(name);
    for (const char* q : {"median", "p90"}) {
      const double committed = json::number(field(b, q)).value_or(0);
      const double now = s == series.end() ? 0 : quantile(s->second.ratios, q[0] == 'm' ? 0.5 : 0.9);
      if (now < committed / 2) {
        ++below_band;
        text << "below the band: " << name << " " << q << " of error / bound " << now << " < half of the committed "
             << committed << " (" << opt.band << "): the bound loosened by 2x or more\n";
      }
    }
  }
  for (const auto& [name, s] : series)
    if (s.violations > 0)
      text << "above the bound: " << name << " in " << s.violations << " cases (an element's error past its rigorous bound)\n";
  const bool any_violation = !violating.empty() || below_band > 0;
  summary["violating_cases"] = std::move(violating);
  std::cout << text.str();
  if (!opt.json.empty()) {
    std::ofstream f(opt.json);
    // One line with 6 digits, each violating case laid out as its case file.
    json::Layout case_files = json::one_line(json::Digits::g6);
    case_files.inner = {{"*", json::indented()}};
    json::Layout layout = json::one_line(json::Digits::g6);
    layout.inner = {{"violating_cases", case_files}};
    if (!(f << json::write(summary, layout) << "\n")) {
      std::cerr << "bound_tightness: cannot write " << opt.json << "\n";
      return 2;
    }
  }
  return any_violation ? 1 : 0;
}
