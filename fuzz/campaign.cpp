#include "fuzz/campaign.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>

#include "fuzz/campaign_file.h"
#include "fuzz/case_record.h"
#include "fuzz/case_runner.h"
#include "fuzz/child_process.h"
#include "fuzz/directory_lock.h"
#include "fuzz/end_marker.h"
#include "fuzz/failure_saving.h"
#include "fuzz/progress.h"
#include "fuzz/results_log.h"
#include "fuzz/task_schedule.h"

namespace flashproof::fuzz {
namespace fs = std::filesystem;
namespace {

struct Running {
  CampaignTask task;
  std::unique_ptr<ChildProcess> child;
};

// With several implementations, those of one case share its reference and baseline through a
// file (case_runner.h), removed once the case's last implementation is recorded. A sampled
// campaign's file gives each implementation the same sample (recomputed from the case and options).
class SharedCaseFiles {
 public:
  explicit SharedCaseFiles(const CampaignSpec& spec)
      : dir_(fs::path(spec.out) / ".work"), share_(spec.share_cases && spec.impls.size() > 1) {}
  // The file of case `index` for a task about to start; empty when cases are not shared.
  std::string start(std::uint64_t index) {
    ++in_flight_[index];
    return file(index);
  }
  // A task of case `index` ended: removes the files of the cases whose tasks have all been issued
  // and ended.
  void end(std::uint64_t index, const TaskSchedule& schedule) {
    --in_flight_[index];
    for (auto it = in_flight_.begin(); it != in_flight_.end();)
      if (it->second == 0 && schedule.past(it->first)) {
        std::error_code ec;
        if (share_) fs::remove(file(it->first), ec);
        it = in_flight_.erase(it);
      } else {
        ++it;
      }
  }

 private:
  std::string file(std::uint64_t index) const {
    return share_ ? (dir_ / ("case-" + std::to_string(index) + ".ctx")).string() : std::string();
  }
  fs::path dir_;
  bool share_;
  std::map<std::uint64_t, int> in_flight_;  // running tasks per case index
};

}  // namespace

CampaignResult run_campaign(const CampaignSpec& spec, std::ostream& progress_out, bool terminal) {
  check_campaign_spec(spec);
  std::error_code ec;
  fs::create_directories(fs::path(spec.out) / "failures", ec);
  fs::create_directories(fs::path(spec.out) / ".work", ec);
  if (ec || !fs::is_directory(spec.out)) throw std::invalid_argument("cannot create the campaign directory " + spec.out);
  const DirectoryLock lock(spec.out, progress_out);
  const CampaignIdentity identity = read_campaign_identity(spec);
  // The records are checked before campaign.json is written, so a refused directory is left as it was.
  ResultsLog log((fs::path(spec.out) / "cases.jsonl").string(),
                 [&](const json::Value& r) { return foreign_record(spec, identity.id, r); });
  write_campaign_identity(spec, identity);
  remove_end_marker(spec);  // this run has not ended

  std::ofstream seeds(fs::path(spec.out) / "progress.log", std::ios::app);
  CampaignResult result;
  result.resumed = log.records();
  Progress progress(progress_out, terminal, records_to_run(spec, log.records()), spec.minutes);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(spec.minutes.value_or(0) * 60));
  const auto time_left = [&] { return !spec.minutes || std::chrono::steady_clock::now() < deadline; };
  const auto unsupported = [&](const std::string& impl) {
    ++result.unsupported[impl];
    progress.drop_from_total();
  };
  TaskSchedule schedule(spec, log);
  SharedCaseFiles shared(spec);

  const auto record = [&](const CampaignTask& t, CaseOutcome o) {
    if (o.refused) {  // refused when it ran: counted like a declared refusal, no record
      unsupported(t.impl);
      return;
    }
    SavedFailure failure;
    if (is_failure(o.status) || o.status == CaseStatus::crash) {
      failure = save_failure(spec, t, o);
      result.failure_files.push_back(failure.path);
    }
    if (o.status == CaseStatus::crash) o.logit_scale = crashed_case_logit_scale(t.c, t.options);
    log.append(case_record(spec, identity.id, t, o, failure));
    ++result.run;
    progress.update(result.run, log.count(CaseStatus::fail), log.count(CaseStatus::crash));
  };

  std::vector<Running> running;
  int slot = 0;
  for (;;) {
    while (static_cast<int>(running.size()) < spec.jobs) {
      std::optional<CampaignTask> t = schedule.next(time_left, unsupported);
      if (!t) break;
      seeds << "case " << t->index << " impl " << t->impl << " seed " << t->c.seed << " "
            << distribution_name(t->c.dist) << " " << t->c.problem.describe() << (t->c.backward ? " backward" : "")
            << "\n" << std::flush;
      const Case c = t->c;
      const CheckOptions options = t->options;
      const std::string scratch = (fs::path(spec.out) / ".work" / ("job" + std::to_string(slot++ % kMaxJobs))).string();
      const std::string shared_file = shared.start(t->index);
      auto child = std::make_unique<ChildProcess>(
          [c, options, shared_file] { return check_in_child(c, options, shared_file); }, scratch, spec.case_timeout);
      running.push_back(Running{std::move(*t), std::move(child)});
    }
    if (running.empty()) break;
    bool finished = false;
    for (std::size_t k = 0; k < running.size(); ++k) {
      if (std::optional<ChildEnd> end = running[k].child->poll()) {
        const CampaignTask task = std::move(running[k].task);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        record(task, outcome_of(*end));
        shared.end(task.index, schedule);
        finished = true;
        break;
      }
    }
    if (!finished) {  // sleep until a child ends or reaches its time limit (a refresh at least 4 times a second)
      std::vector<ChildProcess*> children;
      for (Running& r : running) children.push_back(r.child.get());
      wait_for_any(children, 0.25);
    }
    progress.update(result.run, log.count(CaseStatus::fail), log.count(CaseStatus::crash));
  }
  progress.finish(result.run, log.count(CaseStatus::fail), log.count(CaseStatus::crash));
  fs::remove_all(fs::path(spec.out) / ".work", ec);
  result.pass = log.count(CaseStatus::pass);
  result.fail = log.count(CaseStatus::fail);
  result.out_of_domain = log.count(CaseStatus::out_of_domain);
  result.not_judged = log.count(CaseStatus::not_judged);
  result.crash = log.count(CaseStatus::crash);
  result.pass_baseline_rule = log.count(CaseStatus::pass_baseline_rule);
  result.fail_baseline_rule = log.count(CaseStatus::fail_baseline_rule);
  result.fitted = schedule.fitted();
  write_end_marker(spec, log.records(), result.unsupported, result.fitted);
  return result;
}

}  // namespace flashproof::fuzz
