#include "campaign_fixture.h"

#include "core/json.h"

#include <unistd.h>

#include <atomic>
#include <cmath>
#include <fstream>
#include <iomanip>
#include <sstream>
#include <stdexcept>

namespace flashproof::report::testing {
namespace {

namespace fs = std::filesystem;

std::string quoted(const std::string& s) { return "\"" + s + "\""; }

// x as the project's records write it: %.17g, a non-finite x as the string "inf", "-inf" or "nan".
std::string g17(double x) { return json::write(json::Value(x)); }

std::string case_seed(const RecordSpec& r) { return std::to_string(1000 + r.index); }

bool has_backward(const RecordSpec& r) { return r.tensors.size() > 2; }

std::string metrics(double ulps, double rel, double abs, long long nan_mismatch = 0,
                    long long inf_mismatch = 0) {
  return "{\"count\": 320, \"max_abs\": " + g17(abs) + ", \"max_rel\": " + g17(rel) +
         ", \"rel_floor\": 0.00074467321940054, \"normwise_rel\": 0.00028375801335389861, "
         "\"max_ulps\": " +
         g17(ulps) +
         ", \"nan_mismatch\": " + std::to_string(nan_mismatch) +
         ", \"inf_mismatch\": " + std::to_string(inf_mismatch) + ", \"above_tolerance\": 0, "
         "\"nonfinite_reference\": 0, \"worst_index\": [0, 13, 0, 4], \"worst_value\": "
         "1.0458984375, \"worst_reference\": 1.0464981624723484}";
}

std::string tensor(const TensorSpec& t) {
  return "{\"name\": " + quoted(t.name) + ", \"verdict\": " + quoted(t.verdict) +
         ", \"tolerance\": " + g17(t.tolerance) +
         ", \"max_reference_bound\": 2.0994975127877456e-15, "
         "\"beyond_range\": 0, \"overflow_as_inf\": 0, \"finite_beyond_range\": 0, "
         "\"regression_applies\": " + std::string(t.regression_applies ? "true" : "false") +
         ", \"regression\": " + std::string(t.regression ? "true" : "false") +
         ", \"rigorous_bound\": {\"above\": 0, \"unbounded\": " + std::to_string(t.unbounded) + ", "
         "\"inf_within_bound\": 0, \"max_bound\": 0.0015059282413822277, "
         "\"max_error_over_bound\": " +
         g17(t.error_over_bound) +
         "}, \"reasons\": [], \"errors\": " +
         metrics(t.max_ulps, t.max_rel, t.max_abs, t.nan_mismatch, t.inf_mismatch) +
         ", \"baseline_errors\": " + metrics(t.max_ulps, t.max_rel, t.baseline_max_abs, t.baseline_nan) + "}";
}

// The check record, as `flashproof check --json` writes it (on one line).
std::string check_record(const RecordSpec& r) {
  std::string tensors;
  for (const TensorSpec& t : r.tensors) tensors += (tensors.empty() ? "" : ", ") + tensor(t);
  const std::string in_domain = r.in_domain ? "true" : "false";
  return "{\"case\": {\"impl\": " + quoted(r.impl) +
         ", \"where\": \"host\", \"dtype\": " + quoted(r.dtype) +
         ", \"batch\": 1, \"heads_q\": 1, \"heads_kv\": 1, \"seqlen_q\": 20, "
         "\"seqlen_k\": " +
         std::to_string(r.seqlen_k) + ", \"head_dim\": " + std::to_string(r.head_dim) +
         ", \"scale\": 0.25, \"window_left\": -1, \"window_right\": -1, "
         "\"dist\": \"normal\", \"seed\": " +
         case_seed(r) + ", \"backward\": " + (has_backward(r) ? "true" : "false") +
         "}, \"in_domain\": " + in_domain +
         ", \"inputs_in_domain\": " + (r.status == "out-of-domain" ? "false" : "true") +
         ", \"domain_note\": \"\", \"reference\": {\"backend\": \"fast\", \"sampling\": \"all\", "
         "\"fallback_rows\": 0, \"fallback_columns\": 0}, \"tensors\": [" +
         tensors +
         "], \"seconds\": {\"impl\": 0.0024, \"reference\": 0.0038, \"bounds\": 0.00018}, "
         "\"verdict\": " +
         quoted(r.status) + "}";
}

}  // namespace

std::string case_object_text(const RecordSpec& r) {
  return "{\n  \"format\": \"flashproof-case\",\n  \"version\": 1,\n  \"note\": \"\",\n"
         "  \"impl\": " +
         quoted(r.impl) + ",\n  \"dtype\": " + quoted(r.dtype) +
         ",\n"
         "  \"batch\": 1,\n  \"heads_q\": 1,\n  \"heads_kv\": 1,\n  \"seqlen_q\": 20,\n"
         "  \"seqlen_k\": " +
         std::to_string(r.seqlen_k) + ",\n  \"head_dim\": " + std::to_string(r.head_dim) +
         ",\n  \"window_left\": -1,\n  \"window_right\": -1,\n"
         "  \"scale\": null,\n" +
         (r.packed ? "  \"cu_seqlens_q\": [0, 5, 20],\n  \"cu_seqlens_k\": [0, 7, " + std::to_string(r.seqlen_k) + "],\n"
                   : std::string()) +
         "  \"dist\": \"normal\",\n  \"seed\": " +
         quoted(case_seed(r)) +
         ",\n"
         "  \"backward\": " +
         (has_backward(r) ? "true" : "false") +
         ",\n  \"check\": {\n"
         "    \"k_forward\": 2,\n    \"k_backward\": 3,\n    \"floor_ulps\": 1,\n"
         "    \"lse_floor_ulps\": 4,\n    \"reference\": \"fast\",\n    \"precision_bits\": 128,\n"
         "    \"rel_requirement\": 9.0949470177292824e-13,\n    \"abs_requirement\": 0,\n"
         "    \"relative_to\": \"magnitude\",\n    \"sample\": 0,\n    \"sample_seed\": \"0\"\n  "
         "}\n}";
}

std::string record_line(const RecordSpec& r) {
  // The case object is written on one line: cases.jsonl holds one record per line.
  std::string case_text;
  for (char c : case_object_text(r))
    if (c != '\n') case_text += c;
  const std::string campaign_seed =
      r.campaign_seed.empty() ? "" : "\"campaign_seed\": " + quoted(r.campaign_seed) + ", ";
  return "{\"format\": \"flashproof-fuzz-record\", \"version\": 1, " + campaign_seed +
         "\"index\": " + std::to_string(r.index) + ", \"impl\": " + quoted(r.impl) +
         ", \"where\": \"host\", \"status\": " + quoted(r.status) +
         ", \"kind\": " + quoted(r.kind) + ", \"logit_scale\": " + g17(r.logit_scale) +
         ", \"case\": " + case_text +
         ", \"record\": " + (r.status == "crash" ? std::string("null") : check_record(r)) +
         ", \"error\": " + quoted(r.error) + ", \"failure_file\": " + quoted(r.failure_file) +
         ", \"replay\": " + quoted(r.replay) +
         ", \"seconds\": {\"total\": 0.41, \"impl\": 0.30, \"reference\": 0.08, \"bounds\": 0.01}}";
}

std::string campaign_json(const std::string& seed, long long shard, long long shards, bool flat) {
  const std::string parameters =
      "\"seed\": \"" + seed +
      "\", \"impls\": [\"naive\", \"fa2\"], \"dtypes\": [\"fp16\", \"bf16\"], "
      "\"cases\": 8, \"minutes\": null, \"backward\": \"both\", \"max_work\": 1048576, "
      "\"shard\": {\"index\": " +
      std::to_string(shard) + ", \"count\": " + std::to_string(shards) + "}";
  return "{\"format\": \"flashproof-campaign\", \"version\": 1, " +
         (flat ? parameters : "\"parameters\": {" + parameters + "}") +
         ", \"commit\": \"2031dd8\", \"machine\": \"test\", \"started\": "
         "\"2026-11-21T10:00:00Z\"}\n";
}

TempDir::TempDir() {
  static std::atomic<int> counter{0};
  path_ = fs::temp_directory_path() / ("flashproof-report-test-" + std::to_string(::getpid()) +
                                       "-" + std::to_string(counter++));
  fs::remove_all(path_);
  fs::create_directories(path_);
}

TempDir::~TempDir() {
  std::error_code ec;
  fs::remove_all(path_, ec);
}

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

void write_campaign(const fs::path& dir, const std::string& campaign,
                    const std::vector<std::string>& lines, const std::string& tail, bool ended) {
  fs::create_directories(dir);
  if (!campaign.empty()) write_text(dir / "campaign.json", campaign);
  if (!campaign.empty() && ended)
    write_text(dir / "ended.json",
               "{\"format\": \"flashproof-campaign-end\", \"version\": 1, \"ended\": \"2026-11-21T10:00:00Z\", "
               "\"records\": " + std::to_string(lines.size()) + ", \"why\": \"every case of the shard ran\"}\n");
  std::string text;
  for (const std::string& line : lines) text += line + "\n";
  write_text(dir / "cases.jsonl", text + tail);
}

namespace {

RecordSpec spec(long long index, const std::string& impl, const std::string& dtype,
                const std::string& status = "pass", const std::string& kind = "normal") {
  RecordSpec r;
  r.index = index;
  r.impl = impl;
  r.dtype = dtype;
  r.status = status;
  r.kind = kind;
  return r;
}

TensorSpec tensor_spec(const std::string& name, double ulps, double rel, double abs,
                       double baseline_abs, double error_over_bound,
                       const std::string& verdict = "pass") {
  TensorSpec t;
  t.name = name;
  t.max_ulps = ulps;
  t.max_rel = rel;
  t.max_abs = abs;
  t.baseline_max_abs = baseline_abs;
  t.error_over_bound = error_over_bound;
  t.verdict = verdict;
  return t;
}

// Forward tensors: O as given, LSE the same small error everywhere.
std::vector<TensorSpec> forward(const TensorSpec& o) {
  return {o, tensor_spec("LSE", 1, 1e-7, 2e-7, 2e-7, 0.01)};
}

// Backward tensors after O and LSE: dQ, dK, dV with the given ULPs and error/bound.
std::vector<TensorSpec> backward(const TensorSpec& o, double dq_ulps, double dq_bound,
                                 double dk_ulps) {
  std::vector<TensorSpec> t = forward(o);
  t.push_back(tensor_spec("dQ", dq_ulps, 0.01, 1e-3, 1e-3, dq_bound));
  t.push_back(tensor_spec("dK", dk_ulps, 0.01, 1e-3, 1e-3, 0.1));
  t.push_back(tensor_spec("dV", 20, 0.01, 1e-3, 1e-3, 0.05));
  return t;
}

}  // namespace

RecordSpec standard_record(char name) {
  RecordSpec r;
  switch (name) {
    case 'A':
      r = spec(0, "naive", "fp16");
      r.tensors = forward(tensor_spec("O", 2, 1e-3, 1e-4, 1e-4, 0.05));
      break;
    case 'B':
      r = spec(0, "fa2", "fp16");
      r.tensors = forward(tensor_spec("O", 4, 2e-3, 2e-4, 1e-4, 0.3));
      break;
    case 'C':
      r = spec(2, "naive", "fp16");
      r.tensors = {tensor_spec("O", 0, 0, 0, 0, 0), tensor_spec("LSE", 0, 0, 0, 0, 0)};
      break;
    case 'D':
      r = spec(2, "fa2", "fp16", "crash");
      r.error = "signal 11 (SIGSEGV)";
      r.failure_file = "failures/2-fa2.json";
      r.replay = "flashproof replay shard0/failures/2-fa2.json";
      break;
    case 'E':
    case 'F':
      r = spec(3, name == 'E' ? "naive" : "fa2", "fp16", "out-of-domain", "extreme-logits");
      r.in_domain = false;
      r.logit_scale = 3.2e20;
      r.tensors = {tensor_spec("O", kInf, kInf, kInf, kInf, 0, "out-of-domain"),
                   tensor_spec("LSE", 0, 0, 0, 0, 0, "out-of-domain")};
      break;
    case 'G':
      r = spec(5, "naive", "fp16");
      r.seqlen_k = 300;
      r.head_dim = 64;
      r.tensors = backward(tensor_spec("O", 3, 1.5e-3, 3e-4, 3e-4, 0.6), 100, 0.2, 50);
      break;
    case 'H':
      r = spec(5, "fa2", "fp16", "fail", "dominant-key");
      r.seqlen_k = 300;
      r.head_dim = 64;
      r.in_domain = false;  // a fail whose dV overflows elsewhere: not in the domain, still a fail
      r.failure_file = "failures/5-fa2.json";
      r.replay = "flashproof replay shard0/failures/5-fa2.json";
      r.tensors = backward(tensor_spec("O", 8, 4e-3, 9e-4, 3e-4, 1.5, "fail"), 300, 0.9, 60);
      r.tensors[0].regression = true;  // 9e-4 against 2 x 3e-4: rule 3 reported as well
      break;
    case 'I':
      r = spec(6, "fa2", "fp16", "fail", "near-dtype-max");
      r.logit_scale = 40;
      r.failure_file = "failures/6-fa2.json";
      r.replay = "flashproof replay shard1/failures/6-fa2.json";
      r.tensors = forward(tensor_spec("O", kInf, kInf, kInf, 2e-4, kInf, "fail"));
      break;
    case 'N':
      r = spec(6, "naive", "fp16", "pass", "near-dtype-max");
      r.logit_scale = 40;
      r.tensors = forward(tensor_spec("O", 1, 5e-4, 5e-5, 5e-5, 0));
      break;
    case 'J':
      r = spec(1, "naive", "bf16");
      r.tensors = forward(tensor_spec("O", 1, 4e-3, 4e-3, 4e-3, 0.02));
      break;
    case 'K':
      r = spec(1, "fa2", "bf16");
      // naive's O is exact here (baseline error 0): no ratio
      r.tensors = forward(tensor_spec("O", 2, 8e-3, 8e-3, 0, 0.04));
      break;
    case 'L':
      r = spec(4, "naive", "bf16");
      r.tensors = forward(tensor_spec("O", 3, 0.01, 0.01, 0.01, 0.5));
      break;
    case 'M':
      r = spec(4, "fa2", "bf16");
      r.tensors = forward(tensor_spec("O", 5, 0.02, 0.02, 0.01, 0.5));
      break;
    default: throw std::invalid_argument("no standard record " + std::string(1, name));
  }
  return r;
}

void write_standard_campaign(const fs::path& root) {
  auto lines = [](const std::string& names) {
    std::vector<std::string> v;
    for (char n : names) v.push_back(record_line(standard_record(n)));
    return v;
  };
  const std::string cut = record_line(standard_record('I'));
  // Killed while writing record I: a truncated last line and no ended.json.
  write_campaign(root / "shard0", campaign_json("42", 0, 2), lines("ABCDGH"),
                 cut.substr(0, cut.size() / 2), false);
  write_campaign(root / "shard1", campaign_json("42", 1, 2), lines("CEFINJKLM"));
}

}  // namespace flashproof::report::testing
