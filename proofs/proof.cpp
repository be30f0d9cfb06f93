#include "proofs/proof.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

#include "proofs/obligation.h"

namespace flashproof::proofs {
namespace {

// Z3 checks each model it returns against the assertions; set once, before any context exists.
void enable_model_validation() {
  static std::once_flag once;
  std::call_once(once, [] { z3::set_param("model_validate", true); });
}

std::string fp32_text(const z3::expr& value) {
  z3::context& c = value.ctx();
  z3::expr bits = z3::expr(c, Z3_mk_fpa_to_ieee_bv(c, value)).simplify();
  uint64_t raw = 0;
  if (!bits.is_numeral_u64(raw)) return value.to_string();  // NaN has no unique bit pattern
  const auto word = static_cast<uint32_t>(raw);
  float f;
  std::memcpy(&f, &word, sizeof f);
  std::ostringstream os;
  os.precision(9);
  os << f;
  char hex[16];
  std::snprintf(hex, sizeof hex, "0x%08x", word);
  os << " (" << hex << ")";
  return os.str();
}

std::string value_text(const z3::expr& value) {
  if (value.is_fpa()) {
    if (value.get_sort().fpa_ebits() == 8 && value.get_sort().fpa_sbits() == 24) return fp32_text(value);
    return value.to_string();
  }
  if (value.is_real() && value.is_numeral()) return value.get_decimal_string(12);
  if (value.is_algebraic()) return value.get_decimal_string(12);
  return value.to_string();
}

// The model as "name = value" lines, constants first, then function tables.
std::string model_text(const z3::model& m) {
  std::vector<std::string> constants;
  std::vector<std::string> functions;
  for (unsigned i = 0; i < m.size(); ++i) {
    z3::func_decl d = m[i];
    if (d.arity() == 0) {
      constants.push_back("  " + d.name().str() + " = " + value_text(m.get_const_interp(d)));
      continue;
    }
    z3::func_interp fi = m.get_func_interp(d);
    std::ostringstream os;
    for (unsigned e = 0; e < fi.num_entries(); ++e) {
      z3::func_entry entry = fi.entry(e);
      os << "  " << d.name().str() << "(";
      for (unsigned a = 0; a < entry.num_args(); ++a) os << (a ? ", " : "") << value_text(entry.arg(a));
      os << ") = " << value_text(entry.value()) << "\n";
    }
    os << "  " << d.name().str() << "(otherwise) = " << value_text(fi.else_value());
    functions.push_back(os.str());
  }
  std::sort(constants.begin(), constants.end());
  std::string out;
  for (const auto& s : constants) out += s + "\n";
  for (const auto& s : functions) out += s + "\n";
  return out;
}

std::string file_name(const std::string& s) {
  std::string out = s;
  for (char& ch : out) {
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '-' && ch != '_' && ch != '.') ch = '_';
  }
  return out;
}

ObligationResult check(z3::context& ctx, const Obligation& ob, const std::string& label, int index,
                       const RunOptions& options) {
  ObligationResult r;
  r.name = ob.name;
  const auto start = std::chrono::steady_clock::now();
  z3::solver solver(ctx);
  z3::params params(ctx);
  params.set("timeout", options.timeout_ms);
  solver.set(params);
  for (const auto& a : ob.assumptions) solver.add(a);
  solver.add(!ob.goal);
  if (!options.smt2_dir.empty()) {
    const std::filesystem::path dir(options.smt2_dir);
    std::filesystem::create_directories(dir);
    char number[16];
    std::snprintf(number, sizeof number, ".%02d", index);
    std::ofstream out(dir / (file_name(label) + number + ".smt2"));
    out << "; flashproof " << label << " / " << ob.name << "\n; unsat: proved (the negated claim has no model)\n"
        << solver.to_smt2();
    if (!out) throw std::runtime_error("cannot write SMT-LIB file in " + options.smt2_dir);
  }
  const z3::check_result result = solver.check();
  if (result == z3::unsat) {
    r.outcome = Outcome::proved;
  } else if (result == z3::sat) {
    z3::model m = solver.get_model();
    // Our own validation on top of Z3's: every assumption holds and the goal fails in the model.
    bool valid = m.eval(!ob.goal, true).is_true();
    for (const auto& a : ob.assumptions) valid = valid && m.eval(a, true).is_true();
    if (valid) {
      r.outcome = Outcome::counterexample;
      r.detail = model_text(m);
    } else {
      r.outcome = Outcome::unknown;
      r.detail = "model returned by Z3 failed validation";
    }
  } else {
    r.outcome = Outcome::unknown;
    r.detail = solver.reason_unknown();
  }
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

}  // namespace

const char* to_string(Outcome o) {
  switch (o) {
    case Outcome::proved: return "proved";
    case Outcome::counterexample: return "counterexample";
    case Outcome::unknown: return "unknown";
  }
  return "unknown";
}

ProofResult run_proof(const ProofSpec& spec, Variant variant, const RunOptions& options) {
  enable_model_validation();
  ProofResult result;
  result.name = spec.name;
  result.variant = variant;
  const auto start = std::chrono::steady_clock::now();
  z3::context ctx;
  const std::string label = spec.name + (variant == Variant::twin ? ".twin" : "");
  bool all_proved = true;
  bool any_counterexample = false;
  int index = 0;
  for (const Obligation& ob : spec.build(ctx, variant)) {
    result.parts.push_back(check(ctx, ob, label, ++index, options));
    all_proved = all_proved && result.parts.back().outcome == Outcome::proved;
    any_counterexample = any_counterexample || result.parts.back().outcome == Outcome::counterexample;
  }
  result.outcome = result.parts.empty() ? Outcome::unknown
                   : all_proved         ? Outcome::proved
                   : any_counterexample ? Outcome::counterexample
                                        : Outcome::unknown;
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return result;
}

bool proof_passes(const ProofResult& shipped, const ProofResult& twin) {
  return shipped.outcome == Outcome::proved && twin.outcome == Outcome::counterexample;
}

std::string describe(const ProofResult& result) {
  std::ostringstream os;
  os.setf(std::ios::fixed);
  os.precision(2);
  os << result.name << (result.variant == Variant::twin ? " [twin]" : "") << ": "
     << to_string(result.outcome) << " (" << result.seconds << " s)\n";
  for (const auto& p : result.parts) {
    os << "  " << p.name << ": " << to_string(p.outcome) << " (" << p.seconds << " s)\n";
    if (!p.detail.empty()) {
      std::istringstream lines(p.detail);
      for (std::string line; std::getline(lines, line);) os << "    " << line << "\n";
    }
  }
  return os.str();
}

}  // namespace flashproof::proofs

#include "proofs/catalog.h"

namespace flashproof::proofs {

const std::vector<ProofSpec>& all_proofs() {
  static const std::vector<ProofSpec> proofs = [] {
    std::vector<ProofSpec> all;
    for (auto family : {online_softmax_proofs, backward_proofs, block_skip_proofs, machine_int_proofs, fp_proofs,
                        packed_batch_proofs, score_mod_proofs, split_kv_proofs, paged_kv_proofs}) {
      for (auto& p : family()) all.push_back(std::move(p));
    }
    return all;
  }();
  return proofs;
}

}  // namespace flashproof::proofs
