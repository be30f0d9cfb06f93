#include "reference/reference.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "core/rng.h"
#include "reference/instantiations.h"

namespace flashproof::reference {

std::int64_t CertifiedTensor::count_checked() const {
  return std::accumulate(checked.begin(), checked.end(), std::int64_t{0});
}

namespace {

// All-ones, or `sample` entries chosen by a seeded partial Fisher-Yates shuffle.
std::vector<std::uint8_t> choose(std::int64_t n, std::int64_t sample, std::uint64_t seed) {
  if (sample <= 0 || sample >= n) return std::vector<std::uint8_t>(n, 1);
  std::vector<std::int64_t> idx(n);
  std::iota(idx.begin(), idx.end(), 0);
  Rng rng(seed);
  std::vector<std::uint8_t> mask(n, 0);
  for (std::int64_t t = 0; t < sample; ++t) {
    std::swap(idx[t], idx[t + static_cast<std::int64_t>(rng.below(n - t))]);
    mask[idx[t]] = 1;
  }
  return mask;
}

// Converts an engine result to double: the rounding to double joins the bound, every bound gets
// the floor, and a missing bound (NaN) or a NaN value reads as "no bound" (+inf).
// `mass` null means a magnitude of 1 (LSE). The double engine's vectors become the result's
// (adjusted in place, not copied).
template <class Real>
void publish(std::vector<Real>& value, std::vector<double>& err, std::vector<double>* mass,
             CertifiedTensor& out) {
  const std::size_t n = value.size();
  std::vector<double> magnitude;
  if (mass)
    magnitude = std::move(*mass);
  else
    magnitude.assign(n, 1.0);
  constexpr bool kDouble = std::is_same_v<Real, double>;
  if constexpr (kDouble) {
    out.value = std::move(value);
  } else {
    out.value.resize(n);
    for (std::size_t x = 0; x < n; ++x) out.value[x] = static_cast<double>(value[x]);
  }
  for (std::size_t x = 0; x < n; ++x) {
    const double v = out.value[x];
    double bound = err[x];
    if (std::isfinite(v)) {  // an infinite value (LSE of an empty row) is exact
      if constexpr (!kDouble) bound += std::fabs(v) * 0x1p-52;
      bound += kFloor;
    }
    if (std::isnan(bound) || std::isnan(v)) bound = kInf;
    err[x] = bound;
    magnitude[x] = std::max(std::fabs(v), magnitude[x]);
  }
  out.bound = std::move(err);
  out.magnitude = std::move(magnitude);
}

void shape_tensor(CertifiedTensor& t, Shape shape) {
  t.shape = shape;  // value, bound and magnitude come from publish
  t.checked.assign(shape[0] * shape[1] * shape[2] * shape[3], 0);
}

struct Masks {
  std::vector<std::uint8_t> rows;  // [b][hq][sq]
  std::vector<std::uint8_t> cols;  // [b][hkv][sk]
};

Masks make_masks(const Problem& p, const Options& opt, Stats& stats) {
  Masks m;
  if (opt.plan) {
    if (static_cast<std::int64_t>(opt.plan->rows.size()) != p.batch * p.heads_q * p.seqlen_q ||
        static_cast<std::int64_t>(opt.plan->cols.size()) != p.batch * p.heads_kv * p.seqlen_k)
      throw std::invalid_argument("reference: the sample's rows and columns do not match the problem");
    m.rows = opt.plan->rows;
    m.cols = opt.plan->cols;
    stats.sampling = opt.plan->description;
    return m;
  }
  const std::int64_t nrows = p.batch * p.heads_q * p.seqlen_q;
  const std::int64_t ncols = p.batch * p.heads_kv * p.seqlen_k;
  m.rows = choose(nrows, opt.sample, derive(opt.sample_seed, 0));
  m.cols = choose(ncols, opt.sample, derive(opt.sample_seed, 1));
  if (opt.sample > 0 && (opt.sample < nrows || opt.sample < ncols))
    stats.sampling = std::to_string(std::min(opt.sample, nrows)) + " of " +
                     std::to_string(nrows) + " query rows, " +
                     std::to_string(std::min(opt.sample, ncols)) + " of " +
                     std::to_string(ncols) + " key columns (seed " +
                     std::to_string(opt.sample_seed) + ")";
  else
    stats.sampling = "all";
  return m;
}

// Which mask entry owns each element of a tensor. The layouts of docs/spec.md are [b][s][h][width] while the
// row/column masks are [b][h][s]; LSE is already in mask order. `each` calls fn(owner, first)
// for every row of `width` contiguous elements starting at element `first`.
struct RowLayout {
  std::int64_t batch, seq, heads, width;
  bool mask_order = false;
  template <class Fn>
  void each(Fn&& fn) const {
    if (mask_order) {
      for (std::int64_t x = 0; x < batch * heads * seq; ++x) fn(x, x * width);
      return;
    }
    for (std::int64_t b = 0; b < batch; ++b)
      for (std::int64_t s = 0; s < seq; ++s)
        for (std::int64_t h = 0; h < heads; ++h)
          fn((b * heads + h) * seq + s, ((b * seq + s) * heads + h) * width);
  }
};
RowLayout q_rows(const Problem& p) { return {p.batch, p.seqlen_q, p.heads_q, p.head_dim}; }
RowLayout kv_columns(const Problem& p) { return {p.batch, p.seqlen_k, p.heads_kv, p.head_dim}; }
RowLayout lse_rows(const Problem& p) { return {p.batch, p.seqlen_q, p.heads_q, 1, true}; }

// True when every input value is finite (inside the valid domain or beyond it up to the fp32 range).
bool all_finite(const DenseInputs& in, bool with_dout) {
  for (const DenseRows* r : {&in.q, &in.k, &in.v, &in.dout})
    if (r != &in.dout || with_dout)
      for (double x : r->data)
        if (!std::isfinite(x)) return false;
  return true;
}

// Whether the fast path's element stands. A non-finite value stands only where MPFR could not do
// better: an exact infinity (bound 0: the LSE of a row that sees no key), or any NaN/inf when an
// input is NaN or inf. With finite inputs the exact result is finite (or an exact +inf LSE), so a
// NaN or an inexact infinity from the double engine is its own failure and is recomputed in MPFR.
bool meets(const CertifiedTensor& t, std::size_t x, const Options& opt, bool finite_inputs) {
  if (!std::isfinite(t.value[x]))
    return !finite_inputs || (std::isinf(t.value[x]) && t.bound[x] == 0);
  const double scale = opt.relative_to == Options::RelativeTo::value ? std::fabs(t.value[x])
                                                                     : t.magnitude[x];
  // A bound at the floor (e.g. the exact 0 of an empty row) needs no more precision.
  return t.bound[x] <= std::max({opt.rel_requirement * scale, opt.abs_requirement, 2 * kFloor});
}

void mark_checked(CertifiedTensor& t, const RowLayout& rows, const std::vector<std::uint8_t>& mask) {
  rows.each([&](std::int64_t owner, std::int64_t first) {
    std::fill_n(t.checked.begin() + first, rows.width, mask[owner]);
  });
}

void validate(const Options& opt) {
  if (opt.precision_bits < 64 || opt.precision_bits > 65536)
    throw std::invalid_argument("reference precision (" + std::to_string(opt.precision_bits) +
                                " bits) must be between 64 and 65536");
}

template <class Real>
void forward_with(const DenseInputs& in, ArithModel model, const std::vector<std::uint8_t>& rows,
                  const Options& opt, ForwardResult& res) {
  EngineOutput<Real> out;
  allocate(in.p, false, out);
  run_forward<Real>(in, model, rows, out, opt.threads, opt.mutation);
  for (std::size_t r = 0; r < rows.size(); ++r)
    if (rows[r]) res.stats.max_abs_logit = std::max(res.stats.max_abs_logit, out.max_abs_logit[r]);
  publish(out.o, out.o_err, &out.o_mass, res.o);
  publish(out.lse, out.lse_err, nullptr, res.lse);
}

template <class Real>
void backward_with(const DenseInputs& in, ArithModel model, const Masks& m, const Options& opt,
                   BackwardResult& res) {
  EngineOutput<Real> out;
  allocate(in.p, true, out);
  run_backward<Real>(in, model, m.rows, m.cols, out, opt.threads, opt.mutation);
  publish(out.dq, out.dq_err, &out.dq_mass, res.dq);
  publish(out.dk, out.dk_err, &out.dk_mass, res.dk);
  publish(out.dv, out.dv_err, &out.dv_mass, res.dv);
}

// Replaces the elements owned by masked rows/columns with an MPFR result.
void take_masked(const CertifiedTensor& from, CertifiedTensor& into, const RowLayout& rows,
                 const std::vector<std::uint8_t>& mask) {
  rows.each([&](std::int64_t owner, std::int64_t first) {
    if (!mask[owner]) return;
    for (std::int64_t x = first; x < first + rows.width; ++x) {
      into.value[x] = from.value[x];
      into.bound[x] = from.bound[x];
      into.magnitude[x] = from.magnitude[x];
    }
  });
}

// Rows/columns owning an element that misses the requirement.
void collect_misses(const CertifiedTensor& t, const RowLayout& rows, const Options& opt,
                    bool finite_inputs, std::vector<std::uint8_t>& mask) {
  rows.each([&](std::int64_t owner, std::int64_t first) {
    if (mask[owner]) return;
    for (std::int64_t x = first; x < first + rows.width; ++x)
      if (t.checked[x] && !meets(t, x, opt, finite_inputs)) {
        mask[owner] = 1;
        return;
      }
  });
}

std::int64_t count(const std::vector<std::uint8_t>& m) {
  return std::accumulate(m.begin(), m.end(), std::int64_t{0});
}

}  // namespace

namespace {

// Calls run.template operator()<Real>(model) with the backend's Real type and arithmetic model
// (MPFR at the options' precision, kept alive for the call).
template <class Run>
void with_backend(const Options& opt, Run&& run) {
  switch (opt.backend) {
    case Backend::fast:
      run.template operator()<double>(double_model());
      break;
    case Backend::mpfr: {
      const MpfrPrecision prec(opt.precision_bits);
      run.template operator()<MpfrReal>(prec.model());
      break;
    }
    case Backend::cpp_bin_float:
      run.template operator()<BinFloatReal>(bin_float_model());
      break;
  }
}

ForwardResult forward_dense(const DenseInputs& in, const Options& opt) {
  const Problem& p = in.p;
  ForwardResult res;
  const Masks m = make_masks(p, opt, res.stats);
  shape_tensor(res.o, p.q_shape());
  shape_tensor(res.lse, p.lse_shape());
  res.stats.rows_computed = count(m.rows);
  with_backend(opt, [&]<class Real>(ArithModel model) { forward_with<Real>(in, model, m.rows, opt, res); });
  mark_checked(res.o, q_rows(p), m.rows);
  mark_checked(res.lse, lse_rows(p), m.rows);
  if (opt.backend == Backend::fast) {
    const bool finite = all_finite(in, false);
    std::vector<std::uint8_t> redo(m.rows.size(), 0);
    collect_misses(res.o, q_rows(p), opt, finite, redo);
    collect_misses(res.lse, lse_rows(p), opt, finite, redo);
    res.stats.fallback_rows = count(redo);
    if (res.stats.fallback_rows > 0) {
      ForwardResult exact;
      shape_tensor(exact.o, p.q_shape());
      shape_tensor(exact.lse, p.lse_shape());
      const MpfrPrecision prec(opt.precision_bits);
      forward_with<MpfrReal>(in, prec.model(), redo, opt, exact);
      take_masked(exact.o, res.o, q_rows(p), redo);
      take_masked(exact.lse, res.lse, lse_rows(p), redo);
    }
  }
  return res;
}

BackwardResult backward_dense(const DenseInputs& in, const Options& opt) {
  const Problem& p = in.p;
  BackwardResult res;
  const Masks m = make_masks(p, opt, res.stats);
  shape_tensor(res.dq, p.q_shape());
  shape_tensor(res.dk, p.kv_shape());
  shape_tensor(res.dv, p.kv_shape());
  res.stats.rows_computed = count(m.rows);
  res.stats.columns_computed = count(m.cols);
  with_backend(opt, [&]<class Real>(ArithModel model) { backward_with<Real>(in, model, m, opt, res); });
  mark_checked(res.dq, q_rows(p), m.rows);
  mark_checked(res.dk, kv_columns(p), m.cols);
  mark_checked(res.dv, kv_columns(p), m.cols);
  if (opt.backend == Backend::fast) {
    Masks redo{std::vector<std::uint8_t>(m.rows.size(), 0),
               std::vector<std::uint8_t>(m.cols.size(), 0)};
    const bool finite = all_finite(in, true);
    collect_misses(res.dq, q_rows(p), opt, finite, redo.rows);
    collect_misses(res.dk, kv_columns(p), opt, finite, redo.cols);
    collect_misses(res.dv, kv_columns(p), opt, finite, redo.cols);
    res.stats.fallback_rows = count(redo.rows);
    res.stats.fallback_columns = count(redo.cols);
    if (res.stats.fallback_rows + res.stats.fallback_columns > 0) {
      BackwardResult exact;
      shape_tensor(exact.dq, p.q_shape());
      shape_tensor(exact.dk, p.kv_shape());
      shape_tensor(exact.dv, p.kv_shape());
      const MpfrPrecision prec(opt.precision_bits);
      backward_with<MpfrReal>(in, prec.model(), redo, opt, exact);
      take_masked(exact.dq, res.dq, q_rows(p), redo.rows);
      take_masked(exact.dk, res.dk, kv_columns(p), redo.cols);
      take_masked(exact.dv, res.dv, kv_columns(p), redo.cols);
    }
  }
  return res;
}

}  // namespace

ForwardResult forward(const ValidProblem& p, const HostTensor& q, const HostTensor& k,
                      const HostTensor& v, const Options& opt) {
  validate(opt);
  return forward_dense(DenseInputs(p, q, k, v, nullptr), opt);
}

BackwardResult backward(const ValidProblem& p, const HostTensor& q, const HostTensor& k,
                        const HostTensor& v, const HostTensor& dout, const Options& opt) {
  validate(opt);
  return backward_dense(DenseInputs(p, q, k, v, &dout), opt);
}

Results forward_backward(const ValidProblem& p, const HostTensor& q, const HostTensor& k,
                         const HostTensor& v, const HostTensor* dout, const Options& opt) {
  validate(opt);
  return forward_backward(DenseInputs(p, q, k, v, dout), dout != nullptr, opt);
}

Results forward_backward(const DenseInputs& in, bool backward, const Options& opt) {
  validate(opt);
  if (backward && in.dout.data.empty())
    throw std::invalid_argument("reference backward: the inputs were converted without dO");
  Results r{forward_dense(in, opt), std::nullopt};
  if (backward) r.backward = backward_dense(in, opt);
  return r;
}

}  // namespace flashproof::reference
