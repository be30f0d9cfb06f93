// `flashproof export` (docs/exchange.md): a fuzz campaign's cases written as exchange case
// directories (harness/exchange.h), for an implementation that runs elsewhere (PyTorch's SDPA
// backends: bench/torch_sdpa_accuracy.py), plus DIR/index.json listing them in campaign order.
#pragma once

#include "core/support.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "fuzz/case_generator.h"

namespace flashproof::cli {

// What export does to the generator's masks. SDPA's is_causal is top-left aligned, flashproof's causal
// bottom-right; the two agree when seqlen_q == seqlen_k, so causal_square makes both lengths the
// smaller one (which also keeps the case within the generator's work cap).
enum class MaskRewrite { any, none, causal_square };

struct ExportSpec {
  fuzz::GeneratorSettings generator;
  std::uint64_t cases = 0;  // campaign indices 0 .. cases-1
  MaskRewrite masks = MaskRewrite::any;
  // The backend's declared support (--support FILE, harness/support_record.h): each case is fitted
  // into it (core/support.h fit_to_support), as a campaign over imported:<backend> fits it when the
  // backend's info.json declares the same; nullopt: as drawn.
  std::optional<Support> support;
  std::string support_file;  // --support FILE, read into `support` by export_cases
  std::string out;
};

struct ExportedCase {
  std::uint64_t index = 0;
  std::string directory;  // relative to the export's root
  Case c;                 // as exported (masks rewritten), impl ""
  std::string kind;       // the generator's kind (docs/fuzz.md)
  double logit_scale = 0;
};

// The most cases one export writes: each is a directory of input files, and a count beyond what
// any disk holds would otherwise run until the disk is full.
inline constexpr std::int64_t kMaxExportCases = 1'000'000;

// The bytes the export's case directories will take (inputs and the JSON files, an upper estimate).
double export_bytes_estimate(const ExportSpec& spec);
// Throws std::invalid_argument (one line) when `needed` bytes exceed the `available` ones.
void check_export_space(const ExportSpec& spec, double needed, double available);

// The case `index` of the campaign with the spec's generator, after the mask rewrite.
fuzz::FuzzCase exported_case(const ExportSpec& spec, std::uint64_t index);

// Writes the case directories and OUT/index.json; returns the entries. Throws
// std::invalid_argument (one line) for a spec that cannot run (more than kMaxExportCases, more
// bytes than OUT's file system has free), std::runtime_error when a file
// cannot be written.
std::vector<ExportedCase> export_cases(const ExportSpec& spec);

// Writes the export and prints where it is; exit status 0.
int run_export_command(const ExportSpec& spec);

}  // namespace flashproof::cli
