#include "fuzz/case_runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>
#include <sstream>

#include "fuzz/case_generator.h"
#include "fuzz/child_process.h"
#include "harness/case_context_file.h"
#include "harness/check_render.h"
#include "harness/logit_scan.h"
#include "kernels/registry.h"

namespace flashproof::fuzz {

double max_scaled_logit(const Problem& p, const Inputs& in) {  // a KV cache's inputs are its logical problem's
  return scan_logits(logical_problem(p), in.q, in.k, std::numeric_limits<double>::infinity()).max_visible;
}

double crashed_case_logit_scale(const Case& c, const CheckOptions& options) {
  const Problem& p = c.problem;
  const double pairs_work = static_cast<double>(p.batch) * static_cast<double>(p.heads_q) *
                            static_cast<double>(p.seqlen_q) * static_cast<double>(p.seqlen_k) *
                            static_cast<double>(p.head_dim);
  if (options.reference.sample > 0 && pairs_work > kProductionMaxLogitScanWork)
    return std::numeric_limits<double>::quiet_NaN();
  return max_scaled_logit(p, generate_inputs(p, c.dist, c.seed));
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

std::string check_in_child(const Case& c, const CheckOptions& options, const std::string& shared) {
  CheckRecord r;
  try {
    r = shared.empty() ? run_check(c, options) : check_shared(c, options, shared);
  } catch (const RefusedAtRunTime& e) {  // unsupported, not a crash
    return json::write(json::Value{{"status", "unsupported"}, {"why", e.what()}});
  }
  std::string why;
  for (const TensorCheck& t : r.tensors)
    if (why.empty() && !t.reasons.empty()) why = t.name + ": " + t.reasons.front();
  std::replace(why.begin(), why.end(), '\n', ' ');
  json::Value answer = {{"status", verdict_name(r.verdict)},
                        {"why", why},
                        {"logit_scale", r.reference_stats.max_abs_logit},  // the reference's own logits
                        {"seconds", {{"impl", r.seconds_impl}, {"reference", r.seconds_reference}, {"bounds", r.seconds_bounds}}},
                        {"record", check_record_json(r)}};
  return json::write(answer);
}

CaseOutcome run_case_isolated(const Case& c, const CheckOptions& options, const std::string& scratch,
                              double timeout_seconds) {
  return outcome_of(run_isolated([&] { return check_in_child(c, options); }, scratch, timeout_seconds));
}

namespace {

// The child's answer read into o; false when it is not a whole answer.
bool read_answer(const std::string& text, CaseOutcome& o) {
  json::Value answer;
  try {
    answer = json::parse(text);
  } catch (const std::invalid_argument&) {
    return false;
  }
  if (!answer.is_object()) return false;
  if (answer.value("status", json::Value()) == json::Value("unsupported")) {
    const auto why = json::string(answer.value("why", json::Value()));
    if (!why) return false;
    o.refused = true;
    o.why = *why;
    return true;
  }
  const json::Value* seconds = json::find(answer, "seconds");
  const json::Value* record = json::find(answer, "record");
  const auto status_name = json::string(answer.value("status", json::Value()));
  const std::optional<CaseStatus> status = parse_case_status(status_name.value_or(""));
  const auto why = json::string(answer.value("why", json::Value()));
  const auto scale = json::record_number(answer.value("logit_scale", json::Value()));
  if (!status || *status == CaseStatus::crash || !why || !scale || seconds == nullptr || !seconds->is_object() || record == nullptr || !record->is_object())
    return false;
  const auto time = [&](const char* key) { return json::record_number(seconds->value(key, json::Value())); };
  const auto impl = time("impl"), reference = time("reference"), bounds = time("bounds");
  if (!impl || !reference || !bounds) return false;
  o.status = *status;
  o.why = *why;
  o.logit_scale = *scale;
  o.seconds_impl = *impl;
  o.seconds_reference = *reference;
  o.seconds_bounds = *bounds;
  if (const json::Value* c = json::find(*record, "case"))
    if (const json::Value* where = json::find(*c, "where")) o.where = json::string(*where).value_or("");
  o.record = std::move(answer["record"]);
  return true;
}

}  // namespace

CaseOutcome outcome_of(const ChildEnd& end) {
  CaseOutcome o;
  o.seconds_total = end.seconds;
  if (!end.normal) {
    o.status = CaseStatus::crash;
    o.why = end.problem;
  } else if (!read_answer(end.result, o)) {
    o = CaseOutcome{};
    o.seconds_total = end.seconds;
    o.status = CaseStatus::crash;
    o.why = "the check's child process ended without a complete result";
  }
  return o;
}

}  // namespace flashproof::fuzz
