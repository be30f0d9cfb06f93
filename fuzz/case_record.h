// A record of cases.jsonl (docs/fuzz.md, "cases.jsonl: one record per line"): what the campaign
// writes for a finished task, and whether a record found there belongs to this campaign.
#pragma once

#include <string>

#include "core/json.h"
#include "fuzz/case_runner.h"
#include "fuzz/failure_saving.h"
#include "fuzz/task_schedule.h"

namespace flashproof::fuzz {

// The record of task t (written by ResultsLog in fuzz_record_layout). failure: empty unless the
// task failed or crashed.
json::Value case_record(const CampaignSpec& spec, const std::string& campaign_id, const CampaignTask& t,
                        const CaseOutcome& o, const SavedFailure& failure);

// The case as a record carries it: the case file's value (harness/case_file.h's case_json).
json::Value record_case(const Case& c, const CheckOptions& options);

// Why record r of cases.jsonl is not one of this campaign's (empty when it is): another campaign
// id, or (records written before ids existed) a pair or case this campaign does not have. r has an
// "index" and a string "impl" (ResultsLog checks them first).
std::string foreign_record(const CampaignSpec& s, const std::string& campaign_id, const json::Value& r);

}  // namespace flashproof::fuzz
