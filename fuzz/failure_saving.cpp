#include "core/json.h"
#include "fuzz/failure_saving.h"

#include <algorithm>
#include <filesystem>

#include "fuzz/shell_quote.h"
#include "fuzz/failure_signature.h"
#include "fuzz/shrink.h"
#include "harness/case_file.h"

namespace flashproof::fuzz {
namespace fs = std::filesystem;

SavedFailure save_failure(const CampaignSpec& spec, const CampaignTask& t, const CaseOutcome& o) {
  Case saved = t.c;
  std::string note = "fuzz campaign seed " + std::to_string(spec.generator.seed) + ", case " + std::to_string(t.index) +
                     " (" + t.kind + ", " + t.c.problem.describe() + "): " + case_status_name(o.status) + (o.why.empty() ? "" : ": " + o.why);
  if (spec.shrink) {
    // Candidates are smaller than the case, so a shorter limit suffices, and a hang then costs
    // minutes, not hours, to shrink.
    const ShrinkResult s = shrink_case(t.c, o, t.options, (fs::path(spec.out) / ".work" / "shrink").string(),
                                       std::min(spec.case_timeout, 120.0));
    saved = s.c;
    // The failure kept (the shrinker's target) first: the shrunk outcome's first reason can be
    // another rule the smaller case also breaks.
    note += "; shrunk in " + std::to_string(s.attempts) + " attempts to " + s.c.problem.describe() + ", keeping " +
            describe(s.target) + (s.outcome.why.empty() ? "" : ": " + s.outcome.why);
  }
  SavedFailure f;
  f.file = "failures/" + t.impl + "-" + std::to_string(t.index) + ".json";
  std::replace(f.file.begin(), f.file.end(), ':', '_');
  f.path = (fs::path(spec.out) / f.file).string();
  write_case_file(f.path, saved, t.options, note);
  // A Python callable exists only in its user's program: the call that re-runs it there
  // (python/README.md), as the report writes it (report/report_model.cpp replay_line).
  f.replay = t.impl.rfind("python:", 0) == 0
                 ? "flashproof.replay(<your forward>, " + json::write(json::Value(f.path)) +
                       (saved.backward ? ", backward=<your backward>)" : ")")
                 : "flashproof replay " + shell_quoted(f.path);
  return f;
}

}  // namespace flashproof::fuzz
