// The certified reference attention (docs/spec.md "The reference"): O and LSE forward, dQ, dK, dV
// backward, each element with an absolute error bound that is rigorous under the arithmetic model
// of docs/error-bounds.md. Three backends: a fast double-precision path with compensated sums and
// running bounds that falls back to MPFR per row/column where its bound misses the requirement,
// pure MPFR (runtime precision), and cpp_bin_float (an independent second backend).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/output_sample.h"
#include "core/problem.h"
#include "core/tensor.h"
#include "reference/dense_inputs.h"

namespace flashproof::reference {

enum class Backend { fast, mpfr, cpp_bin_float };

// Deliberately wrong variants of the reference, used only by the tests that show the reference
// checks catch them. causal_top_left also aligns ALiBi's distance top-left;
// softcap_derivative_dropped leaves dS without the cap's 1 - tanh^2.
enum class Mutation { none, gradient_sign_flipped, scale_applied_twice, causal_top_left, softcap_derivative_dropped };
const char* backend_name(Backend b);

struct Options {
  Backend backend = Backend::fast;
  unsigned precision_bits = 128;  // MPFR precision (at least this many bits are used)
  // The fast path keeps an element when bound <= max(rel * scale, abs); otherwise its row (O,
  // LSE, dQ) or column (dK, dV) is recomputed with MPFR at precision_bits. The scale is the
  // element's magnitude (max of |value| and the size of its summands, see CertifiedTensor), or
  // |value| alone with RelativeTo::value (near-cancelling elements then fall back).
  enum class RelativeTo { magnitude, value };
  double rel_requirement = 0x1p-40;
  double abs_requirement = 0;
  RelativeTo relative_to = RelativeTo::magnitude;
  int threads = 0;  // 0: all hardware threads
  // Seeded sampling for large problems: when > 0, only this many query rows (b, h, i) for O, LSE
  // and dQ, and this many key columns (b, hkv, j) for dK and dV, are computed.
  std::int64_t sample = 0;
  std::uint64_t sample_seed = 0;
  // The harness's structured sample (harness/sample_plan.h): when set, exactly these rows and
  // columns are computed, and `sample` and `sample_seed` are not used. Must outlive the call.
  const OutputSample* plan = nullptr;
  Mutation mutation = Mutation::none;  // tests only
};

// Dense values over a tensor's logical shape (row-major), each with an absolute error bound on
// the exact result; `checked[i]` is 0 for elements that sampling left out (value NaN there).
struct CertifiedTensor {
  Shape shape{1, 1, 1, 1};
  std::vector<double> value;
  std::vector<double> bound;
  std::vector<std::uint8_t> checked;
  // max(|value|, size of the summands), e.g. sum_j P_ij |V_jc| for O, sum_j P_ij (|dP_ij| +
  // |D_i|) |K_jc| |scale| for dQ, 1 for LSE: the natural scale of relative error where sums cancel.
  std::vector<double> magnitude;
  std::int64_t count_checked() const;
};

struct Stats {
  std::int64_t rows_computed = 0;      // query rows (forward or dQ) computed
  std::int64_t columns_computed = 0;   // key columns (dK, dV) computed
  std::int64_t fallback_rows = 0;      // rows recomputed with MPFR by the fast path
  std::int64_t fallback_columns = 0;   // columns recomputed with MPFR by the fast path
  std::string sampling;                // "all" or what was sampled
  // Largest |scale q.k| over the visible pairs of the computed rows (forward; to double
  // precision), e.g. a case's logit scale for reports.
  double max_abs_logit = 0;
};

struct ForwardResult {
  CertifiedTensor o, lse;
  Stats stats;
};
struct BackwardResult {
  CertifiedTensor dq, dk, dv;
  Stats stats;
};

// Inputs are host tensors in docs/spec.md's layout (any strides, any dtype; values taken exactly).
// Throws std::invalid_argument on an invalid problem (where it converts to ValidProblem) or
// mismatched tensor shapes.
ForwardResult forward(const ValidProblem& p, const HostTensor& q, const HostTensor& k,
                      const HostTensor& v, const Options& opt = {});
BackwardResult backward(const ValidProblem& p, const HostTensor& q, const HostTensor& k,
                        const HostTensor& v, const HostTensor& dout, const Options& opt = {});

// Both, over one copy of the inputs (a check needs both: this converts them once). The backward
// is computed only when dout is given.
struct Results {
  ForwardResult forward;
  std::optional<BackwardResult> backward;
};
Results forward_backward(const ValidProblem& p, const HostTensor& q, const HostTensor& k,
                         const HostTensor& v, const HostTensor* dout, const Options& opt = {});
// The same over inputs already converted (e.g. shared with the harness's domain check); the
// backward needs in.dout.
Results forward_backward(const DenseInputs& in, bool backward, const Options& opt = {});

}  // namespace flashproof::reference
