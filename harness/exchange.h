// The exchange format (docs/exchange.md): cases written as files so that an implementation this
// project cannot link (PyTorch's SDPA backends, on a machine that cannot build flashproof) runs
// on flashproof's inputs, and its outputs come back to be judged like a registered kernel's.
//
//   ROOT/<16 hex digits>/case.json   the case (a case file, harness/case_file.h): the source of truth
//                        meta.json   dtype, shapes, exact fp32 softmax scale, mask, checksums
//                        q.bin k.bin v.bin dout.bin [k_new.bin v_new.bin]   inputs: raw little-endian element bits of
//                                    the dtype, contiguous, Q/dO [b, sq, hq, d], K/V [b, sk, hkv, d] (a KV
//                                    cache: the cache, Problem::kv_shape(); appended keys apart)
//                        <backend>/o.bin lse.bin [dq.bin dk.bin dv.bin] | <backend>/refused.txt
//
// O, dQ, dK, dV are in the dtype and the layouts of docs/spec.md; LSE is fp32, natural log, [b, hq, sq].
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "core/generators.h"
#include "harness/check.h"

namespace flashproof::exchange {

// FNV-1a, 64 bits (offset basis 0xcbf29ce484222325, prime 0x100000001b3), continuing from `h`.
inline constexpr std::uint64_t kFnvOffsetBasis = 0xcbf29ce484222325ULL;
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t h = kFnvOffsetBasis);
std::string hex64(std::uint64_t x);  // 16 lower-case hex digits

// The case directory's name: hex64(fnv1a64(case_to_json(c'))) where c' is c with impl "" and
// backward false (so it depends on the problem, the distribution and the seed only), default check
// options and no note. Any program holding the case finds its directory with this.
std::string case_directory_name(const Case& c);

// A .bin file that is missing, not a regular file, unreadable or of the wrong size: bad input
// (`flashproof` exits 2 with this one line; in a campaign, the case's crash).
struct BadExchangeFile : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

// A tensor's logical elements in row-major order as little-endian bytes of its dtype (any strides).
std::string tensor_bytes(const HostTensor& t);
void write_tensor_file(const std::string& path, const HostTensor& t);
// Reads a file written as above into a new contiguous tensor; throws BadExchangeFile with one line
// naming the file when it is missing, unreadable or of the wrong size (checked before reading).
HostTensor read_tensor_file(const std::string& path, DType dtype, Shape shape, int rank = 4);
// The same into an existing tensor of the file's shape (any strides): only its elements are written.
void read_tensor_file_into(const std::string& path, HostTensor& into);

// Writes ROOT/<case_directory_name(c)>/ with case.json (c with the note), meta.json and the inputs
// as generate_inputs makes them. Returns the directory's name. Throws std::invalid_argument for an
// invalid case, std::runtime_error when a file cannot be written.
std::string write_case(const std::string& root, const Case& c, const std::string& note = {});

// The inputs stored in a case directory, for the problem of its case.json.
Inputs read_inputs(const std::string& case_dir, const Problem& p);

// An implementation's outputs into CASE_DIR/<backend>/ (o.bin, lse.bin and, when dq is not empty,
// dq.bin dk.bin dv.bin), e.g. to stand in for an external backend in tests.
void write_outputs(const std::string& case_dir, const std::string& backend, const Outputs& out);

// The cases under a root: every subdirectory holding a case.json.
struct StoredCase {
  std::string dir;  // ROOT/<name>
  Case c;
};
// Throws std::invalid_argument (one line) when the root is not a directory or a case.json is bad.
std::vector<StoredCase> list_cases(const std::string& root);

// The backends with an output directory in any case under the root (names of letters, digits,
// '.', '_' and '-'), sorted.
std::vector<std::string> list_backends(const std::vector<StoredCase>& cases);

}  // namespace flashproof::exchange
