// The fp32 vocabulary of theorem 6 (fp_proofs.cpp): literals, constants and the predicates its
// statements are written in, over Z3's FloatingPoint(8, 24) with round-to-nearest-even.
#pragma once

#include <z3++.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "proofs/z3_domain.h"

namespace flashproof::proofs::fp32 {

using z3::expr;
using D = algo::Domain<expr>;

inline z3::sort f32_sort(z3::context& c) { return c.fpa_sort(8, 24); }
inline expr f32(z3::context& c, float v) { return c.fpa_val(v); }
inline expr f32_var(z3::context& c, const std::string& name) { return c.constant(name.c_str(), f32_sort(c)); }
inline expr neg_inf(z3::context& c) { return c.fpa_inf(f32_sort(c), true); }
inline expr pos_inf(z3::context& c) { return c.fpa_inf(f32_sort(c), false); }

inline expr is_nan(const expr& x) { return x.mk_is_nan(); }
inline expr is_finite(const expr& x) { return !x.mk_is_nan() && !x.mk_is_inf(); }
inline expr is_neg_inf(const expr& x) { return D::is_neg_inf(x); }
inline expr sign_negative(const expr& x) { return expr(x.ctx(), Z3_mk_fpa_is_negative(x.ctx(), x)); }
// +0 or positive; fp.leq(0, x) would admit -0 too.
inline expr nonnegative(const expr& x) { return !is_nan(x) && !sign_negative(x); }
inline expr in_unit(const expr& x) { return nonnegative(x) && x <= f32(x.ctx(), 1.0f); }
inline expr within(const expr& x, float bound) {
  return is_finite(x) && f32(x.ctx(), -bound) <= x && x <= f32(x.ctx(), bound);
}
inline expr plus_zero(const expr& x) { return x == f32(x.ctx(), 0.0f); }  // `==` is bitwise: not -0
inline expr is_one(const expr& x) { return x == f32(x.ctx(), 1.0f); }

inline expr for_all(const std::vector<expr>& xs, const std::function<expr(const expr&)>& pred) {
  expr r = xs.front().ctx().bool_val(true);
  for (const auto& x : xs) r = r && pred(x);
  return r;
}

inline expr one_of(const expr& x, const std::vector<expr>& candidates) {
  expr r = x.ctx().bool_val(false);
  for (const auto& c : candidates) r = r || x == c;
  return r;
}

template <class T>
std::vector<T> joined(std::vector<T> a, std::vector<T> b) {
  for (auto& x : b) a.push_back(std::move(x));
  return a;
}

}  // namespace flashproof::proofs::fp32
