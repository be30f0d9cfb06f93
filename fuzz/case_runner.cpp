#include "fuzz/case_runner.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>

#include "fuzz/child_process.h"
#include "harness/case_context_file.h"
#include "harness/logit_scan.h"
#include "kernels/registry.h"

namespace flashproof::fuzz {

double max_scaled_logit(const Problem& p, const Inputs& in) {
  return scan_logits(p, in.q, in.k, std::numeric_limits<double>::infinity()).max_visible;
}

std::string one_line(const std::string& json) {
  std::string out;
  out.reserve(json.size());
  for (std::size_t i = 0; i < json.size(); ++i) {
    if (json[i] == '\n') {
      while (i + 1 < json.size() && json[i + 1] == ' ') ++i;
      continue;
    }
    out += json[i];
  }
  return out;
}

namespace {

// The check on the case's shared context: loaded when a sibling child saved it, else prepared
// and saved for the siblings.
CheckRecord check_shared(const Case& c, const CheckOptions& options, const std::string& shared) {
  AttentionImpl* impl = find_implementation(c.impl);
  if (!impl) throw std::invalid_argument("unknown implementation '" + c.impl + "'");
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<CaseContext> ctx = load_case_context(shared, c, options);
  if (ctx) {
    ctx->seconds_reference = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  } else {
    ctx = prepare_case(c, options, true);
    try {
      save_case_context(shared, c, options, *ctx);
    } catch (const std::exception&) {  // sharing is only a saving: the check goes on without it
    }
  }
  return run_check(c, *impl, *ctx, options);
}

}  // namespace

// The child's answer: four header lines, then the record.
std::string check_in_child(const Case& c, const CheckOptions& options, const std::string& shared) {
  const CheckRecord r = shared.empty() ? run_check(c, options) : check_shared(c, options, shared);
  std::string why;
  for (const TensorCheck& t : r.tensors)
    if (why.empty() && !t.reasons.empty()) why = t.name + ": " + t.reasons.front();
  for (char& ch : why)
    if (ch == '\n') ch = ' ';
  const double scale = r.reference_stats.max_abs_logit;  // the reference's own logits
  char numbers[160];
  std::snprintf(numbers, sizeof numbers, "%.17g\n%.17g %.17g %.17g\n", scale, r.seconds_impl, r.seconds_reference,
                r.seconds_bounds);
  return std::string(verdict_name(r.verdict)) + "\n" + why + "\n" + numbers + one_line(to_json(r));
}

CaseOutcome run_case_isolated(const Case& c, const CheckOptions& options, const std::string& scratch,
                              double timeout_seconds) {
  return outcome_of(run_isolated([&] { return check_in_child(c, options); }, scratch, timeout_seconds));
}

CaseOutcome outcome_of(const ChildEnd& end) {
  CaseOutcome o;
  o.seconds_total = end.seconds;
  if (!end.normal) {
    o.status = "crash";
    o.why = end.problem;
    return o;
  }
  std::istringstream in(end.result);
  std::string scale;
  std::getline(in, o.status);
  std::getline(in, o.why);
  std::getline(in, scale);
  in >> o.seconds_impl >> o.seconds_reference >> o.seconds_bounds;
  in.ignore(1);
  std::getline(in, o.record_json);
  o.logit_scale = std::strtod(scale.c_str(), nullptr);
  if (o.status.empty() || o.record_json.empty()) {
    o.status = "crash";
    o.why = "the check's child process ended without a complete result";
    o.record_json.clear();
  }
  return o;
}

}  // namespace flashproof::fuzz
