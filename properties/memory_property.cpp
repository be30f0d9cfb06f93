// Memory: outputs written exactly into strided views, and NaN placed where no output may read it.
#include <cmath>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kernels/algo/mask.h"
#include "properties/check_support.h"
#include "properties/element_compare.h"
#include "properties/property_checks.h"

namespace flashproof::properties::checks {
namespace {

std::uint32_t nan_bits(DType t) { return t == DType::fp16 ? 0x7E00u : t == DType::bf16 ? 0x7FC0u : 0x7FC00000u; }

// A [b, s, h, d] view into storage with two more rows per batch entry and 8 more elements per head
// row, the storage filled with `fill`; the view's elements are copied from `values` when given.
HostTensor padded_view(DType t, const Shape& shape, std::uint32_t fill, const HostTensor* values) {
  HostTensor storage(t, {shape[0], shape[1] + 2, shape[2], shape[3] + 8});
  storage.fill_storage_bits(fill);
  const std::int64_t row = shape[3] + 8;
  HostTensor view = storage.view(shape, {(shape[1] + 2) * shape[2] * row, shape[2] * row, row, 1}, 0);
  if (values != nullptr)
    for_each_index(view, [&](const Index& i) { view.set_bits(i[0], i[1], i[2], i[3], bits_at(*values, i)); });
  return view;
}

// The storage elements of a padded view outside the view that no longer hold `fill`.
std::int64_t touched_outside(const HostTensor& view, std::uint32_t fill) {
  const Shape& s = view.shape();
  const std::int64_t row = view.strides()[2], batch = view.strides()[0];
  std::int64_t n = 0;
  for (std::int64_t x = 0; x < view.storage_elements(); ++x) {
    const std::int64_t seq = (x % batch) / view.strides()[1];
    const bool inside = seq < s[1] && x % row < s[3];
    if (!inside && view.raw_bits(x) != fill) ++n;
  }
  return n;
}

}  // namespace

// Outputs land exactly in strided views (the poisoned storage around them untouched), and NaN in
// K and V at keys no row sees, past the sequence ends and past head_dim never reaches an output:
// every output equals the run on clean contiguous inputs bitwise (dQ of a backward that is not
// reproducible: NaN/inf exactly where the clean run has them).
Outcome memory(AttentionImpl& impl, const Case& c) {
  const Problem& p = c.problem;
  const Inputs in = inputs_of(c);
  const Outputs clean = run_implementation(impl, p, c.backward, in);
  const algo::WindowMask<std::int64_t> mask{p.mask_offset(), p.window_left, p.window_right};
  std::vector<char> key_seen(static_cast<std::size_t>(p.seqlen_k), 0);
  for (std::int64_t j = 0; j < p.seqlen_k; ++j)
    for (std::int64_t i = 0; i < p.seqlen_q && !key_seen[static_cast<std::size_t>(j)]; ++i)
      key_seen[static_cast<std::size_t>(j)] = mask.visible(i, j) ? 1 : 0;
  const std::uint32_t nan = nan_bits(p.dtype), poison = output_poison_bits(p.dtype);
  HostTensor q = padded_view(p.dtype, p.q_shape(), nan, &in.q), dout = padded_view(p.dtype, p.q_shape(), nan, &in.dout);
  HostTensor k = padded_view(p.dtype, p.kv_shape(), nan, &in.k), v = padded_view(p.dtype, p.kv_shape(), nan, &in.v);
  std::int64_t unseen = 0;
  for_each_index(k, [&](const Index& i) {
    if (key_seen[static_cast<std::size_t>(i[1])]) return;
    k.set_bits(i[0], i[1], i[2], i[3], nan);
    v.set_bits(i[0], i[1], i[2], i[3], nan);
    ++unseen;
  });
  HostTensor o = padded_view(p.dtype, p.q_shape(), poison, nullptr);
  HostTensor lse(DType::fp32, p.lse_shape(), 3);
  impl.forward(p, ForwardArgs{q, k, v, o, lse});
  const std::pair<const char*, std::pair<const HostTensor*, const HostTensor*>> forward_outputs[] = {
      {"O", {&o, &clean.o}}, {"LSE", {&lse, &clean.lse}}};
  for (const auto& [name, pair] : forward_outputs)
    if (std::string w = bitwise_mismatch(name, *pair.first, *pair.second); !w.empty())
      return fail("with NaN around the inputs: " + w);
  if (const std::int64_t n = touched_outside(o, poison); n > 0)
    return fail("O: " + std::to_string(n) + " storage elements outside the view written");
  if (c.backward) {
    HostTensor dq = padded_view(p.dtype, p.q_shape(), poison, nullptr);
    HostTensor dk = padded_view(p.dtype, p.kv_shape(), poison, nullptr), dv = padded_view(p.dtype, p.kv_shape(), poison, nullptr);
    impl.backward(p, BackwardArgs{q, k, v, o, lse, dout, dq, dk, dv});
    for (const auto& [name, pair] : {std::pair{"dK", std::pair{&dk, &clean.dk}}, {"dV", {&dv, &clean.dv}}})
      if (std::string w = bitwise_mismatch(name, *pair.first, *pair.second); !w.empty())
        return fail("with NaN around the inputs: " + w);
    if (impl.bitwise_reproducible_backward()) {
      if (std::string w = bitwise_mismatch("dQ", dq, clean.dq); !w.empty()) return fail("with NaN around the inputs: " + w);
    } else {
      std::string why;
      for_each_index(dq, [&](const Index& i) {
        if (why.empty() && std::isfinite(value_at(dq, i)) != std::isfinite(value_at(clean.dq, i)))
          why = "dQ with NaN around the inputs is " + exact(value_at(dq, i)) + " at " + where("dQ", i, 4) + ", clean " +
                exact(value_at(clean.dq, i));
      });
      if (!why.empty()) return fail(why);
    }
    for (const auto& [name, view] : {std::pair{"dQ", &dq}, {"dK", &dk}, {"dV", &dv}})
      if (const std::int64_t n = touched_outside(*view, poison); n > 0)
        return fail(std::string(name) + ": " + std::to_string(n) + " storage elements outside the view written");
  }
  return holds_with(unseen > 0 ? "NaN at unseen keys" : "NaN past the ends only");
}

}  // namespace flashproof::properties::checks
