// A packed batch is its sequences computed one by one (docs/spec.md "Packed batches"): the
// reference of each sequence, run as a dense problem on views of the packed tensors, certifies
// the same exact values as the packed run, so the two agree within the sum of their bounds.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

#include "core/generators.h"
#include "reference/reference.h"

namespace flashproof {
namespace {

Problem packed_problem(bool causal) {
  Problem p;
  p.heads_q = 4, p.heads_kv = 2, p.head_dim = 24, p.dtype = DType::bf16;
  p.cu_seqlens_q = {0, 5, 5, 6, 18, 19};
  p.cu_seqlens_k = {0, 3, 7, 7, 27, 28};
  p.seqlen_q = p.cu_seqlens_q.back(), p.seqlen_k = p.cu_seqlens_k.back();
  if (causal) p.window_left = -1, p.window_right = 0;
  return p;
}

// Rows [begin, begin + n) of dimension 1 of a [1, total, heads, d] tensor.
HostTensor rows(const HostTensor& t, std::int64_t begin, std::int64_t n) {
  Shape shape = t.shape();
  shape[1] = n;
  return t.view(shape, t.strides(), t.offset() + begin * t.strides()[1]);
}

// How many elements of the packed tensor disagree with sequence s's dense result beyond both bounds.
std::int64_t disagreements(const reference::CertifiedTensor& packed, const reference::CertifiedTensor& dense,
                           std::int64_t begin, bool lse_layout) {
  const Shape& ds = dense.shape;  // [1, n, heads, d] or LSE [1, heads, n, 1]
  const Shape& ps = packed.shape;
  std::int64_t bad = 0;
  for (std::int64_t a = 0; a < ds[1]; ++a)
    for (std::int64_t b = 0; b < ds[2]; ++b)
      for (std::int64_t c = 0; c < ds[3]; ++c) {
        const std::int64_t di = (a * ds[2] + b) * ds[3] + c;
        const std::int64_t pi = lse_layout ? (a * ps[2] + begin + b) * ps[3] + c : ((begin + a) * ps[2] + b) * ps[3] + c;
        const double x = packed.value[pi], y = dense.value[di];
        if (x == y) continue;  // infinities of rows without keys included
        if (!(std::fabs(x - y) <= packed.bound[pi] + dense.bound[di])) ++bad;
      }
  return bad;
}

std::int64_t compare_with_sequences(const Problem& p, reference::Mutation packed_mutation) {
  const Inputs in = generate_inputs(p, *parse_distribution("normal"), 5);
  reference::Options opt;
  opt.mutation = packed_mutation;
  const reference::Results whole = reference::forward_backward(p, in.q, in.k, in.v, &in.dout, opt);
  std::int64_t bad = 0;
  for (std::size_t s = 0; s + 1 < p.cu_seqlens_q.size(); ++s) {
    const std::int64_t q0 = p.cu_seqlens_q[s], k0 = p.cu_seqlens_k[s];
    Problem one = p;
    one.cu_seqlens_q.clear(), one.cu_seqlens_k.clear();
    one.seqlen_q = p.cu_seqlens_q[s + 1] - q0, one.seqlen_k = p.cu_seqlens_k[s + 1] - k0;
    if (one.seqlen_q == 0 || one.seqlen_k == 0) continue;  // not a dense problem; covered by the exact empty-row values
      const HostTensor dout = rows(in.dout, q0, one.seqlen_q);
    const reference::Results part = reference::forward_backward(
        one, rows(in.q, q0, one.seqlen_q), rows(in.k, k0, one.seqlen_k), rows(in.v, k0, one.seqlen_k), &dout);
    bad += disagreements(whole.forward.o, part.forward.o, q0, false);
    bad += disagreements(whole.forward.lse, part.forward.lse, q0, true);
    bad += disagreements(whole.backward->dq, part.backward->dq, q0, false);
    bad += disagreements(whole.backward->dk, part.backward->dk, k0, false);
    bad += disagreements(whole.backward->dv, part.backward->dv, k0, false);
  }
  return bad;
}

TEST(PackedReference, IsItsSequencesOneByOne) {
  for (bool causal : {false, true}) EXPECT_EQ(compare_with_sequences(packed_problem(causal), reference::Mutation::none), 0);
}

// The twin: a packed reference whose sequences are aligned top-left disagrees with the sequences'
// own (bottom-right) references, so the comparison above can fail.
TEST(PackedReference, AMisalignedPackedReferenceDisagrees) {
  EXPECT_GT(compare_with_sequences(packed_problem(true), reference::Mutation::causal_top_left), 0);
}

}  // namespace
}  // namespace flashproof
