#include "cli/export_command.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <iostream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include "core/json.h"
#include "fuzz/case_runner.h"
#include "harness/exchange.h"
#include "harness/support_record.h"

namespace flashproof::cli {
namespace {

namespace fs = std::filesystem;

const char* masks_name(MaskRewrite m) {
  return m == MaskRewrite::none ? "none" : m == MaskRewrite::causal_square ? "causal-square" : "any";
}

const char* direction_name(fuzz::GeneratorSettings::Direction d) {
  using D = fuzz::GeneratorSettings::Direction;
  return d == D::forward ? "no" : d == D::backward ? "yes" : "both";
}

std::string summary(const ExportedCase& e) {
  return e.c.problem.describe() + " " + distribution_name(e.c.dist) + " seed " + std::to_string(e.c.seed) +
         (e.c.backward ? " forward+backward" : " forward");
}

void write_index(const ExportSpec& spec, const std::vector<ExportedCase>& entries) {
  json::Value parameters = {{"seed", std::to_string(spec.generator.seed)}, {"cases", spec.cases}};
  json::Value& dtypes = parameters["dtypes"] = json::Value::array();
  for (DType d : spec.generator.dtypes) dtypes.push_back(dtype_name(d));
  parameters["backward"] = direction_name(spec.generator.direction);
  parameters["max_seqlen"] = spec.generator.max_seqlen;
  parameters["max_work"] = spec.generator.max_work;
  parameters["masks"] = masks_name(spec.masks);
  if (spec.support) parameters["support"] = *spec.support;  // only when given: old indexes stay as they were
  // Only when not the default, so that a default export's index.json is what it always was.
  if (spec.generator.profile != fuzz::Profile::standard) parameters["profile"] = fuzz::profile_name(spec.generator.profile);
  json::Value cases = json::Value::array();
  for (const ExportedCase& e : entries)
    cases.push_back({{"index", e.index},
                     {"directory", e.directory},
                     {"kind", e.kind},
                     {"logit_scale", e.logit_scale},  // NaN where the scan was skipped: written "nan"
                     {"summary", summary(e)}});
  const json::Value index = {{"format", "flashproof-exchange-index"},
                             {"version", 1},
                             {"parameters", std::move(parameters)},
                             {"cases", std::move(cases)}};
  // The top object one member per line, the parameters on one line, each case on its own line.
  json::Layout one_case_per_line = json::indented();
  one_case_per_line.inner = {{"*", json::one_line()}};
  json::Layout layout = json::indented();
  layout.inner = {{"parameters", json::one_line()}, {"cases", one_case_per_line}};
  const fs::path path = fs::path(spec.out) / "index.json";
  std::ofstream out(path, std::ios::trunc);
  out << json::write(index, layout) << "\n";
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

}  // namespace

fuzz::FuzzCase exported_case(const ExportSpec& spec, std::uint64_t index) {
  fuzz::FuzzCase f = fuzz::generate_case(spec.generator, index);
  Problem& p = f.c.problem;
  if (spec.masks != MaskRewrite::any) p.window_left = p.window_right = -1;
  if (spec.masks == MaskRewrite::causal_square) {
    p.window_right = 0;
    p.seqlen_q = p.seqlen_k = std::min(p.seqlen_q, p.seqlen_k);
  }
  if (spec.support) fit_to_support(p, *spec.support);
  return f;
}

double export_bytes_estimate(const ExportSpec& spec) {
  constexpr double kJsonBytesPerCase = 4096;  // case.json, meta.json and the index entry, generously
  double bytes = 0;
  for (std::uint64_t index = 0; index < spec.cases; ++index) {
    const Problem& p = exported_case(spec, index).c.problem;
    const auto elements = [](const std::array<std::int64_t, 4>& shape) {
      return static_cast<double>(shape[0]) * static_cast<double>(shape[1]) * static_cast<double>(shape[2]) *
             static_cast<double>(shape[3]);
    };
    const double q = elements(p.q_shape()), kv = elements(p.kv_shape());  // q and dout; k and v
    bytes += (2 * q + 2 * kv) * dtype_bytes(p.dtype) + kJsonBytesPerCase;
  }
  return bytes;
}

void check_export_space(const ExportSpec& spec, double needed, double available) {
  if (needed <= available) return;
  constexpr double kMiB = 1024.0 * 1024.0;
  std::ostringstream why;
  why << std::fixed << std::setprecision(1) << "export: the " << spec.cases << " cases need about "
      << needed / kMiB << " MiB, but the file system of " << printable(spec.out) << " has "
      << available / kMiB << " MiB free";
  throw std::invalid_argument(why.str());
}

std::vector<ExportedCase> export_cases(const ExportSpec& given) {
  ExportSpec spec = given;
  if (!spec.support_file.empty()) {  // any problem with the file is bad input: one line, exit 2
    std::ifstream in(spec.support_file, std::ios::binary);
    if (!in) throw std::invalid_argument("--support: cannot read " + spec.support_file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    try {
      spec.support = json::parse(text, spec.support_file).get<Support>();
    } catch (const std::invalid_argument& e) {
      throw std::invalid_argument(std::string("--support: ") + e.what());
    }
  }
  if (spec.out.empty()) throw std::invalid_argument("export needs --out DIR");
  if (spec.cases < 1) throw std::invalid_argument("export needs --cases N (N >= 1)");
  if (spec.cases > static_cast<std::uint64_t>(kMaxExportCases))
    throw std::invalid_argument("export writes at most " + std::to_string(kMaxExportCases) + " cases, got " +
                                std::to_string(spec.cases));
  if (spec.generator.dtypes.empty()) throw std::invalid_argument("no dtype to export");
  std::error_code ec;
  fs::create_directories(spec.out, ec);
  if (!fs::is_directory(spec.out, ec)) throw std::invalid_argument("cannot create directory '" + spec.out + "'");
  const fs::space_info space = fs::space(spec.out, ec);
  if (!ec) check_export_space(spec, export_bytes_estimate(spec), static_cast<double>(space.available));
  std::vector<ExportedCase> entries;
  std::map<std::string, std::size_t> first_of_directory;
  for (std::uint64_t index = 0; index < spec.cases; ++index) {
    const fuzz::FuzzCase f = exported_case(spec, index);
    ExportedCase e{index, exchange::case_directory_name(f.c), f.c, f.kind, 0};
    // Two indices with the same (problem, distribution, seed) share a directory; it then holds
    // the backward when either asks for it.
    if (auto seen = first_of_directory.find(e.directory); seen != first_of_directory.end()) {
      e.c.backward = e.c.backward || entries[seen->second].c.backward;
      entries[seen->second].c.backward = e.c.backward;
    } else {
      first_of_directory[e.directory] = entries.size();
    }
    const std::string profile =
        spec.generator.profile == fuzz::Profile::standard ? "" : std::string(" --profile ") + fuzz::profile_name(spec.generator.profile);
    const std::string note = "flashproof export --seed " + std::to_string(spec.generator.seed) + profile + ": case " +
                             std::to_string(index) + ", kind " + f.kind + ", masks " + masks_name(spec.masks) +
                             "; set impl to imported:<backend> to replay it";
    exchange::write_case(spec.out, e.c, note);
    const Problem& p = e.c.problem;
    const double pairs_work = static_cast<double>(p.batch) * static_cast<double>(p.heads_q) *
                              static_cast<double>(p.seqlen_q) * static_cast<double>(p.seqlen_k) *
                              static_cast<double>(p.head_dim);
    if (spec.generator.profile == fuzz::Profile::production && pairs_work > fuzz::kProductionMaxLogitScanWork)
      e.logit_scale = std::numeric_limits<double>::quiet_NaN();  // "nan": the scan would take hours
    else
      e.logit_scale = fuzz::max_scaled_logit(p, generate_inputs(p, e.c.dist, e.c.seed));
    entries.push_back(std::move(e));
  }
  write_index(spec, entries);
  return entries;
}

int run_export_command(const ExportSpec& spec) {
  const std::vector<ExportedCase> entries = export_cases(spec);
  std::cout << "export: " << entries.size() << " cases (masks " << masks_name(spec.masks) << ") in " << spec.out
            << "; index: " << spec.out << "/index.json\n";
  return 0;
}

}  // namespace flashproof::cli
