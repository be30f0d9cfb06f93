// The one pipeline of SPEC.md, used by the CLI (and by properties and fuzz campaigns as they
// land): case -> inputs in the dtype -> implementation under test -> outputs -> reference ->
// errors and tolerances -> verdict -> record (JSON or a table).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/generators.h"
#include "core/metrics.h"
#include "core/problem.h"
#include "reference/reference.h"

namespace flashproof {

struct Case {
  Problem problem;
  Distribution dist;
  std::uint64_t seed = 0;
  std::string impl = "naive";
  bool backward = false;
};

struct CheckOptions {
  reference::Options reference;
  // Accuracy regression rule: error <= k * (naive baseline's error) + floor (k = 2 forward,
  // 3 backward, as in FlashAttention's tests). The floor is `floor_ulps` units of the dtype's
  // rounding at the tensor's largest reference magnitude (the size of the summands, see
  // reference::CertifiedTensor), so a baseline error of exactly 0 (seqlen_k = 1) or an exactly
  // zero reference does not demand a bit-exact answer.
  double k_forward = 2, k_backward = 3, floor_ulps = 1;
};

enum class Verdict { pass, fail, out_of_domain };
const char* verdict_name(Verdict v);

struct TensorCheck {
  std::string name;  // "O", "LSE", "dQ", "dK", "dV"
  ErrorMetrics errors;
  ErrorMetrics baseline_errors;  // of the naive baseline on the same inputs
  double tolerance = 0;          // regression rule: k * baseline max_abs + floor
  double max_reference_bound = 0;
  Verdict verdict = Verdict::pass;
  std::vector<std::string> reasons;  // why it failed, one line each
};

struct CheckRecord {
  Case c;
  std::string impl_where;
  bool in_domain = true;
  std::string domain_note;  // why the case is out of the valid domain
  std::vector<TensorCheck> tensors;
  reference::Stats reference_stats;
  std::string reference_backend;
  Verdict verdict = Verdict::pass;
  double seconds_impl = 0, seconds_reference = 0;
};

// Throws std::invalid_argument for an invalid case or an unknown / unsupporting implementation,
// with a one-line message.
CheckRecord run_check(const Case& c, const CheckOptions& opt = {});

std::string to_json(const CheckRecord& r);
std::string to_table(const CheckRecord& r);

}  // namespace flashproof
