// Fuzz campaign directories written the way docs/fuzz.md describes, for the report tests: records
// shaped like real `flashproof check --json` output inside fuzz records, a campaign.json, and the
// two-shard campaign most tests read.
#pragma once

#include <filesystem>
#include <limits>
#include <string>
#include <vector>

namespace flashproof::report::testing {

inline constexpr double kInf = std::numeric_limits<double>::infinity();

struct TensorSpec {
  std::string name;
  double max_ulps = 0, max_rel = 0, max_abs = 0, baseline_max_abs = 0, error_over_bound = 0;
  std::string verdict = "pass";
  bool regression = false;  // the check's rule-3 flag
  long long baseline_nan = 0;  // elements where the naive baseline is NaN (baseline_errors.nan_mismatch)
  long long unbounded = 0;     // of the 320 compared elements, those with no finite bound
  // Of the 320 compared elements, those returned NaN where the exact value is not NaN
  // (errors.nan_mismatch), and inf where it is finite (errors.inf_mismatch): left out of every
  // finite error above, as the check leaves them out.
  long long nan_mismatch = 0, inf_mismatch = 0;
  double tolerance = 0.0019441231640973243;  // rule 3's
  bool regression_applies = true;
};

struct RecordSpec {
  std::string campaign_seed = "42";  // written as the record's campaign_seed; "" leaves it out
  long long index = 0;
  std::string impl = "naive", dtype = "fp16", status = "pass", kind = "normal";
  long long seqlen_k = 20, head_dim = 16;
  bool packed = false;  // a packed batch of two sequences (docs/spec.md "Packed batches")
  double logit_scale = 1.5;
  bool in_domain = true;
  std::vector<TensorSpec> tensors;  // empty for a crash (record null)
  std::string error, failure_file, replay;
};

// The case file object of the record (docs/case-files.md), as the case-file writer lays it out.
std::string case_object_text(const RecordSpec& r);
// The record as one cases.jsonl line (no newline).
std::string record_line(const RecordSpec& r);
// campaign.json with the parameters in a "parameters" object, as the fuzz engine writes it, or
// at the top level (docs/fuzz.md's example) when flat.
std::string campaign_json(const std::string& seed, long long shard, long long shards, bool flat = false);

// A fresh directory under the system's temporary directory, removed with its contents at the end.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

void write_text(const std::filesystem::path& path, const std::string& text);
std::string read_text(const std::filesystem::path& path);

// Writes DIR/campaign.json (unless campaign is empty) and DIR/cases.jsonl (the lines, each ended
// by a newline, then tail as it is: e.g. a truncated line without newline), and DIR/ended.json
// when ended (a campaign that ended by itself) and campaign is not empty.
void write_campaign(const std::filesystem::path& dir, const std::string& campaign,
                    const std::vector<std::string>& lines, const std::string& tail = "",
                    bool ended = true);

// The standard fixture: campaign seed 42 in two shards, shard0/ and shard1/ under root, with
// fp16 and bf16 cases of naive and fa2, one record in both shards, a crash, fails, out-of-domain
// records, and a truncated last line in shard0, which has no ended.json (killed). Its expected numbers are in the tests.
void write_standard_campaign(const std::filesystem::path& root);
// The records of the standard fixture, by name (A ... N, as the tests refer to them).
RecordSpec standard_record(char name);

}  // namespace flashproof::report::testing
