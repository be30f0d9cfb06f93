#include "fuzz/case_runner.h"

#include <cmath>
#include <cstdio>
#include <limits>
#include <sstream>

#include "fuzz/child_process.h"
#include "kernels/algo/mask.h"

namespace flashproof::fuzz {

double max_scaled_logit(const Problem& p, const Inputs& in) {
  const algo::WindowMask<std::int64_t> mask{p.mask_offset(), p.window_left, p.window_right};
  const double scale = p.softmax_scale();
  double worst = 0;
  for (std::int64_t b = 0; b < p.batch; ++b)
    for (std::int64_t h = 0; h < p.heads_q; ++h)
      for (std::int64_t i = 0; i < p.seqlen_q; ++i)
        for (std::int64_t j = 0; j < p.seqlen_k; ++j) {
          if (!mask.visible(i, j)) continue;
          double dot = 0;
          for (std::int64_t c = 0; c < p.head_dim; ++c) dot += in.q.get(b, i, h, c) * in.k.get(b, j, p.kv_head(h), c);
          const double x = std::fabs(scale * dot);
          if (!(x <= worst)) worst = std::isnan(x) ? std::numeric_limits<double>::infinity() : x;
        }
  return worst;
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

// The child's answer: four header lines, then the record.
std::string check_in_child(const Case& c, const CheckOptions& options) {
  const CheckRecord r = run_check(c, options);
  std::string why;
  for (const TensorCheck& t : r.tensors)
    if (why.empty() && !t.reasons.empty()) why = t.name + ": " + t.reasons.front();
  for (char& ch : why)
    if (ch == '\n') ch = ' ';
  const double scale = max_scaled_logit(c.problem, generate_inputs(c.problem, c.dist, c.seed));
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
