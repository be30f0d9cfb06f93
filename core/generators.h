// Seeded input generators: Q, K, V and dO for a Problem, in its dtype, bit-identical on every
// machine for a given (problem, distribution, seed).
//
// Randomness: tensor t (Q=0, K=1, V=2, dO=3) uses seed derive(seed, t); within a tensor each row
// (i0, i1, i2) has its own stream derive(tensor_seed, linear row index) consumed along i3. So the
// values depend on logical indices only (identical for contiguous tensors and strided views) and
// rows can be generated in parallel. Per-(batch, kv head) structure (the dominant key, the shared
// K row, the direction of growing_max) comes from derive(derive(seed, 4), b * heads_kv + g).
//
// Kinds ("name[:param]" on the command line; param 0 means the kind's default):
//   normal        N(0,1).
//   uniform       U[-1,1); a value that rounds up to 1 becomes the largest value below 1.
//   scaled:F      N(0,1) * F, default F = 4 (the "ragged last block, x3..x5" regression).
//   large-logits:T
//                 Q, K = N(0,1) * sqrt(T / (|scale| * sqrt(d))), so each scaled logit
//                 scale * q.k has standard deviation T (the row maxima are a few times T).
//                 Default T = 1e3. V normal.
//   dominant-key  per (b, g): a key j* (uniform in [0, seqlen_k)) and a sign vector s in {+-1}^d;
//                 K normal except K[b,j*,g,:] = 8 s; every query row of the group is
//                 Q[b,i,h,:] = a (1 + u_i) s + e_i, a = 40 / (8 |scale| d), u_i ~ U[0,1),
//                 e_i ~ N(0, (0.5 / (|scale| sqrt d))^2). The logit of j* is 40 (1 + u_i) +- a
//                 few, the others ~N(0, 25 (1 + u_i)^2 / d), so softmax(j*) ~ 1 in every row that
//                 sees j*. V normal.
//   equal-rows    per (b, g) one N(0,1) vector r: K[b,j,g,:] = r for all j, so every row's softmax
//                 is uniform (O = mean of V). Q, V normal.
//   growing-max:G per (b, g) a sign vector s; K[b,j,g,:] = (1 + j gamma) s with
//                 gamma = (G - 1) / max(1, seqlen_k - 1), Q[b,i,h,:] = (1 + u_i) / (|scale| d) s.
//                 Row i's logits grow linearly from (1 + u_i) at key 0 to G (1 + u_i) at the last
//                 key, so the running max rises in every key block. Default G = 32. Strictly
//                 increasing per block of 16 keys while 16 / seqlen_k exceeds the dtype's
//                 relative spacing (fp16: seqlen_k up to ~16k, bf16 ~2k). V normal.
//   subnormal     3/4 of the elements subnormal (random sign and nonzero fraction), the rest
//                 normal values from the four smallest binades.
//   bits          random bit patterns; 1/8 get exponent field 0 and 1/8 all ones (of those a
//                 quarter with zero fraction), so zeros of both signs, subnormals, inf and NaN all
//                 appear in tensors of a few hundred elements.
//   special:F     a fraction F (default 1/4) from {+0, -0, +inf, -inf, NaN, +-min subnormal,
//                 +-max subnormal, +-min normal, max finite, -max finite}, the rest N(0,1).
// dO is normal except for bits and special (same kind as the inputs). Values are rounded once to
// the dtype and clamped to +-max finite (only bits/special produce non-finite values).
// Masks are not taken into account (a row may not see the dominant key, for example). Where Q
// is built from a direction, it takes the sign of the scale, so the intended logits are positive.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/problem.h"
#include "core/tensor.h"

namespace flashproof {

struct Distribution {
  enum class Kind {
    normal, uniform, scaled, large_logits, dominant_key, equal_rows, growing_max, subnormal,
    bits, special
  };
  Kind kind = Kind::normal;
  double param = 0;  // 0: the kind's default; see above for which kinds take one
};

// "normal", "scaled", "scaled:5", "large-logits:1e4", ... Params must be finite and positive
// (growing-max: > 1; special: <= 1); kinds without a param reject one.
std::optional<Distribution> parse_distribution(std::string_view text);
std::string distribution_name(const Distribution& d);  // parse_distribution's inverse
std::vector<std::string> distribution_names();          // every kind, without params
double effective_param(const Distribution& d);          // param or default (0: takes none)
// True for kinds generated element by element (any tensor shape); the others need the Problem.
bool is_elementwise(Distribution::Kind k);

struct KvCacheInputs;  // core/kv_cache.h

// A KV-cache problem's inputs (docs/spec.md "KV caches") are those of its logical packed problem
// (logical_problem, core/problem.h), whose keys are read back from the cache, and `cache`: the
// cache problem with its K and V as the implementation receives them. Null otherwise.
struct Inputs {
  HostTensor q, k, v, dout;
  std::shared_ptr<const KvCacheInputs> cache = nullptr;

  Inputs without_cache() const { return {q, k, v, dout, nullptr}; }
};

// The keys and values of kv head `kv_head` of batch entry `b` as dense rows of head_dim doubles
// (key j at j * head_dim), for the per-group scans of the bounds and the envelopes.
void read_kv_rows(const Inputs& in, std::int64_t b, std::int64_t kv_head, std::vector<double>& keys,
                  std::vector<double>& values);

// Stream ids of derive(seed, id).
enum class InputStream : std::uint64_t { q = 0, k = 1, v = 2, dout = 3, structure = 4 };

// Contiguous tensors in p.dtype: Q and dO p.q_shape(), K and V p.kv_shape().
// An invalid Problem is refused where it converts to ValidProblem (std::invalid_argument).
Inputs generate_inputs(const ValidProblem& p, const Distribution& d, std::uint64_t seed);
// A KV-cache problem's Inputs from its cache (and appended keys) and its logical Q and dO
// ([1, batch * seqlen_q, heads_q, head_dim]): K and V are the logical keys read back through the
// cache, the appended ones after each sequence's stored ones. generate_inputs ends with it; the
// exchange format's reader too.
Inputs cache_problem_inputs(const ValidProblem& p, HostTensor q, HostTensor dout, const KvCacheInputs& cache);
// Same values into caller-provided tensors (any strides, e.g. slices of a packed QKV tensor);
// they must have the shapes and dtype above (std::invalid_argument otherwise). Only the elements
// of the views are written.
void fill_inputs(const ValidProblem& p, const Distribution& d, std::uint64_t seed, Inputs& into);
// One tensor of an elementwise kind, by logical index; `seed` is the tensor's own seed (e.g.
// derive(seed, InputStream::v)). Throws std::invalid_argument for other kinds.
void fill(HostTensor& t, const Distribution& d, std::uint64_t seed);

}  // namespace flashproof
