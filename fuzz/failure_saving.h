// A failed or crashed campaign task kept for replay: shrunk (shrink.h) unless the campaign says
// not to, and saved as a case file under DIR/failures/ with a note of where it came from.
#pragma once

#include <string>

#include "fuzz/case_runner.h"
#include "fuzz/task_schedule.h"

namespace flashproof::fuzz {

struct SavedFailure {
  std::string file;    // relative to the campaign directory: failures/IMPL-INDEX.json
  std::string path;    // the campaign directory's path joined with file
  std::string replay;  // the command that replays it, ready to paste
};

// o: the task's outcome, status fail or crash.
SavedFailure save_failure(const CampaignSpec& spec, const CampaignTask& t, const CaseOutcome& o);

}  // namespace flashproof::fuzz
