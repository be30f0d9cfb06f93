#include "fuzz/case_record.h"

#include <algorithm>

#include "harness/case_file.h"

namespace flashproof::fuzz {

json::Value record_case(const Case& c, const CheckOptions& options) {
  return case_json(c, options);
}

json::Value case_record(const CampaignSpec& spec, const std::string& campaign_id, const CampaignTask& t,
                        const CaseOutcome& o, const SavedFailure& failure) {
  return {{"format", "flashproof-fuzz-record"},
          {"version", 1},
          {"campaign_seed", std::to_string(spec.generator.seed)},
          {"campaign_id", campaign_id},
          {"index", t.index},
          {"impl", t.impl},
          {"where", o.where},
          {"status", case_status_name(o.status)},
          {"kind", t.kind},
          {"logit_scale", o.logit_scale},
          {"case", record_case(t.c, t.options)},
          {"record", o.record},
          {"error", o.why},
          {"failure_file", failure.file},
          {"replay", failure.replay},
          {"seconds",
           {{"total", o.seconds_total}, {"impl", o.seconds_impl}, {"reference", o.seconds_reference}, {"bounds", o.seconds_bounds}}}};
}

std::string foreign_record(const CampaignSpec& s, const std::string& campaign_id, const json::Value& r) {
  const std::string refusal = "; " + s.out + "/cases.jsonl holds another campaign's records: use another --out";
  if (const json::Value* theirs = json::find(r, "campaign_id")) {
    const std::optional<std::string> id = json::string(*theirs);
    if (id != campaign_id)
      return "a record of campaign " + shown(id.value_or(json::write(*theirs))) + ", not of this directory's campaign \"" +
             campaign_id + "\"" + refusal;
  }
  const std::uint64_t index = json::unsigned64(*json::find(r, "index")).value();
  const std::string impl = json::string(*json::find(r, "impl")).value();
  if (std::find(s.impls.begin(), s.impls.end(), impl) == s.impls.end())
    return "a record of implementation " + shown(impl) + ", which this campaign does not run" + refusal;
  if (index % s.shard.count != s.shard.index || (s.cases && index >= *s.cases))
    return "a record of case " + std::to_string(index) + ", not a case of this campaign's shard " + s.shard.text() + refusal;
  const json::Value* c = json::find(r, "case");
  const Case expected = campaign_case(s, index, impl);
  // Compared as read (harness/records.h), so a record written in an older case-file version
  // (before the record layer) still resumes.
  const auto same_case = [&] {
    try {
      const CaseFile stored = c->get<CaseFile>();
      return record_case(stored.c, stored.options) ==
             record_case(expected, campaign_check_options(s, expected));
    } catch (const std::invalid_argument&) {
      return false;
    }
  };
  if (c == nullptr || !same_case())
    return "case " + std::to_string(index) + " differs from this campaign's case " + std::to_string(index) + refusal;
  return {};
}

}  // namespace flashproof::fuzz
