#include "fuzz/campaign.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <memory>
#include <random>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "core/json.h"
#include "core/rng.h"
#include "fuzz/campaign_meta.h"
#include "fuzz/case_runner.h"
#include "fuzz/child_process.h"
#include "fuzz/progress.h"
#include "fuzz/results_log.h"
#include "fuzz/shrink.h"
#include "harness/case_file.h"
#include "kernels/registry.h"

#ifndef FLASHPROOF_SOURCE_DIR
#define FLASHPROOF_SOURCE_DIR "."
#endif

namespace flashproof::fuzz {
namespace fs = std::filesystem;
namespace {

constexpr std::uint64_t kAll = std::numeric_limits<std::uint64_t>::max();
// The sample's seed: a stream of the case's input seed that no input tensor uses.
constexpr std::uint64_t kSampleSeedStream = 0x73616d706c65;  // "sample"

std::string command_output(const std::string& command) {
  std::string out;
  if (std::FILE* p = ::popen(command.c_str(), "r")) {
    char buf[256];
    while (std::fgets(buf, sizeof buf, p)) out += buf;
    ::pclose(p);
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

// Holds DIR/.lock for the run, so that a second run on the same directory is refused instead of
// racing this one (both appending the same records, and the first to end removing the .work files
// the other's case processes still use, which then count as crashes). A POSIX record lock: not
// inherited by the forked case processes and released when the process ends, killed or not, so a
// killed campaign's directory is free at once. The file stays (removing it would let a third run
// lock a new file while a second still holds the old one). Where the file system cannot lock
// (ENOLCK), the run goes on unguarded and says so.
class DirectoryLock {
 public:
  DirectoryLock(const fs::path& dir, std::ostream& notes) {
    const std::string path = (dir / ".lock").string();
    fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) throw std::invalid_argument("cannot open " + path + ": " + std::strerror(errno));
    struct flock want {};
    want.l_type = F_WRLCK;
    want.l_whence = SEEK_SET;
    if (::fcntl(fd_, F_SETLK, &want) == 0) return;
    const int why = errno;
    if (why != EACCES && why != EAGAIN) {
      notes << "fuzz: note: cannot lock " << path << " (" << std::strerror(why)
            << "); a second run on this directory would not be refused\n";
      return;
    }
    struct flock holder = want;
    std::string who;
    if (::fcntl(fd_, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK && holder.l_pid > 0)
      who = " (pid " + std::to_string(holder.l_pid) + ")";
    ::close(fd_);
    fd_ = -1;
    throw std::invalid_argument(dir.string() + " is in use by another flashproof fuzz run" + who +
                                "; wait for it to end or use another --out");
  }
  ~DirectoryLock() {
    if (fd_ >= 0) ::close(fd_);
  }
  DirectoryLock(const DirectoryLock&) = delete;
  DirectoryLock& operator=(const DirectoryLock&) = delete;

 private:
  int fd_ = -1;
};

// campaign.json's text for a new campaign.
std::string campaign_json(const CampaignSpec& s, const std::string& id) {
  std::string commit = command_output("git -C '" FLASHPROOF_SOURCE_DIR "' rev-parse --short HEAD 2>/dev/null");
  if (commit.empty()) commit = "unknown";
  char host[256] = "unknown";
  ::gethostname(host, sizeof host - 1);
  return "{\n  \"format\": \"flashproof-campaign\",\n  \"version\": 1,\n  \"campaign_id\": " + json_quote(id) +
         ",\n  \"parameters\": " + parameters_json(s) + ",\n  \"commit\": " + json_quote(commit) +
         ",\n  \"machine\": " +
         json_quote(std::string(host) + ", " + std::to_string(std::thread::hardware_concurrency()) + " hardware threads") +
         ",\n  \"started\": " + json_quote(utc_now()) + "\n}\n";
}

// A fresh campaign's id: random, so that records of two directories run with the same parameters
// still tell their campaign apart.
std::string new_campaign_id() {
  std::random_device random;
  char buf[17];
  std::snprintf(buf, sizeof buf, "%08x%08x", random(), random());
  return buf;
}

// The directory's campaign.json, checked to describe this campaign; nullopt when there is none.
std::optional<Json> existing_campaign(const CampaignSpec& s) {
  const fs::path file = fs::path(s.out) / "campaign.json";
  if (!fs::exists(file)) return std::nullopt;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  return check_campaign_json(text.str(), s, file.string());
}

// Why a record of cases.jsonl is not one of this campaign's (empty when it is): another campaign
// id, or (records written before ids existed) a pair or case this campaign does not have.
std::string foreign_record(const CampaignSpec& s, const std::string& id, const Json& r) {
  const std::string refusal = "; " + s.out + "/cases.jsonl holds another campaign's records: use another --out";
  if (const Json* theirs = r.find("campaign_id"); theirs && (theirs->type != Json::Type::string || theirs->text != id))
    return "a record of campaign " + shown(theirs->text) + ", not of this directory's campaign \"" + id + "\"" + refusal;
  const auto index = static_cast<std::uint64_t>(r.find("index")->integer());
  const std::string impl = r.find("impl")->text;
  if (std::find(s.impls.begin(), s.impls.end(), impl) == s.impls.end())
    return "a record of implementation " + shown(impl) + ", which this campaign does not run" + refusal;
  if (index % s.shard.count != s.shard.index || (s.cases && index >= *s.cases))
    return "a record of case " + std::to_string(index) + ", not a case of this campaign's shard " + s.shard.text() + refusal;
  const Json* c = r.find("case");
  const Case expected = campaign_case(s, index, impl);
  if (c == nullptr || !same_json(*c, parse_json(one_line(case_to_json(expected, campaign_check_options(s, expected))))))
    return "case " + std::to_string(index) + " differs from this campaign's case " + std::to_string(index) + refusal;
  return {};
}

// ended.json: written when a run ends by itself (every case of the shard ran, or its minutes ran
// out) and removed when a run starts, so a directory without it was killed or is still running;
// `flashproof report` warns about such an input. Written atomically, so the file is whole or absent.
void write_end_marker(const CampaignSpec& s, std::uint64_t records) {
  write_file_atomically((fs::path(s.out) / "ended.json").string(),
                        "{\"format\": \"flashproof-campaign-end\", \"version\": 1, \"ended\": " + json_quote(utc_now()) +
                            ", \"records\": " + std::to_string(records) + ", \"why\": " +
                            json_quote(s.cases ? "every case of the shard ran" : "the --minutes ran out") + "}\n");
}

// The record's "where" (the check names it: host, gpu, emulated); empty for a crash.
std::string where_of(const std::string& record_json) {
  try {
    const Json r = parse_json(record_json);
    if (const Json* c = r.find("case"))
      if (const Json* w = c->find("where")) return w->text;
  } catch (const std::invalid_argument&) {
  }
  return {};
}

struct Task {
  std::uint64_t index;
  std::string impl;
  Case c;
  std::string kind;
  CheckOptions options;  // campaign_check_options of the case
};

struct Running {
  Task task;
  std::unique_ptr<ChildProcess> child;
};

}  // namespace

std::string shell_quoted(std::string_view s) {
  const auto plain = [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || std::string_view("_./:=@%+,-").find(ch) != std::string_view::npos;
  };
  if (!s.empty() && std::all_of(s.begin(), s.end(), plain)) return std::string(s);
  const bool control = std::any_of(s.begin(), s.end(), [](char ch) {
    return static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) == 0x7f;
  });
  std::string o = control ? "$'" : "'";
  for (char ch : s) {
    char buf[8];
    if (!control) o += ch == '\'' ? std::string("'\\''") : std::string(1, ch);
    else if (ch == '\'' || ch == '\\') o += '\\', o += ch;
    else if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) == 0x7f)
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(ch)), o += buf;
    else o += ch;
  }
  return o + "'";
}

CheckOptions campaign_check_options(const CampaignSpec& spec, const Case& c) {
  CheckOptions options;
  options.reference.sample = campaign_sample(spec);
  // Only when sampling: an unsampled campaign's records keep the options they always had.
  if (options.reference.sample > 0) options.reference.sample_seed = derive(c.seed, kSampleSeedStream);
  return options;
}

Case campaign_case(const CampaignSpec& spec, std::uint64_t index, const std::string& impl) {
  Case c = generate_case(spec.generator, index).c;
  c.impl = impl;
  return c;
}

CampaignResult run_campaign(const CampaignSpec& spec, std::ostream& progress_out, bool terminal) {
  if (!spec.cases && !spec.minutes) throw std::invalid_argument("give the campaign's size: --cases N or --minutes M");
  if (spec.cases && spec.minutes) throw std::invalid_argument("give --cases or --minutes, not both");
  if (spec.minutes && !(*spec.minutes > 0)) throw std::invalid_argument("--minutes must be positive");
  if (spec.minutes && !(*spec.minutes <= kMaxMinutes))
    throw std::invalid_argument((std::ostringstream() << "--minutes must be at most " << static_cast<long long>(kMaxMinutes)
                                                      << " (ten years), got " << *spec.minutes)
                                    .str());
  if (spec.impls.empty()) throw std::invalid_argument("no implementation to fuzz");
  for (auto it = spec.impls.begin(); it != spec.impls.end(); ++it)
    if (std::find(spec.impls.begin(), it, *it) != it)  // it would run, and be recorded, twice
      throw std::invalid_argument("implementation '" + *it + "' is given twice");
  if (spec.generator.dtypes.empty()) throw std::invalid_argument("no dtype to fuzz");
  if (spec.jobs < 1 || spec.jobs > kMaxJobs)
    throw std::invalid_argument("--jobs must be between 1 and " + std::to_string(kMaxJobs));
  if (spec.generator.max_seqlen < 1 || spec.generator.max_work < 1)
    throw std::invalid_argument("--max-seqlen and --max-work must be at least 1");
  if (spec.sample && *spec.sample < 0)
    throw std::invalid_argument("--sample must be >= 0 (0: every element), got " + std::to_string(*spec.sample));
  for (const std::string& name : spec.impls) {
    const AttentionImpl* impl = find_implementation(name);
    if (impl == nullptr) throw std::invalid_argument("unknown implementation '" + name + "' (flashproof list)");
    bool runs_one = false;
    for (DType t : spec.generator.dtypes) {
      Problem p;
      p.dtype = t;
      runs_one = runs_one || impl->unsupported_reason(p, false).empty();
    }
    if (!runs_one) throw std::invalid_argument(name + " runs none of the dtypes asked");
  }
  std::error_code ec;
  fs::create_directories(fs::path(spec.out) / "failures", ec);
  fs::create_directories(fs::path(spec.out) / ".work", ec);
  if (ec || !fs::is_directory(spec.out)) throw std::invalid_argument("cannot create the campaign directory " + spec.out);
  const DirectoryLock lock(spec.out, progress_out);
  std::optional<Json> existing = existing_campaign(spec);
  const Json* known_id = existing ? existing->find("campaign_id") : nullptr;
  if (known_id && known_id->type != Json::Type::string)
    throw std::invalid_argument(spec.out + "/campaign.json: campaign_id is not a string; use another --out");
  const std::string campaign_id = known_id ? known_id->text : new_campaign_id();
  // The records are checked before campaign.json is written, so a refused directory is left as it was.
  ResultsLog log((fs::path(spec.out) / "cases.jsonl").string(),
                 [&](const Json& r) { return foreign_record(spec, campaign_id, r); });
  const std::string campaign_file = (fs::path(spec.out) / "campaign.json").string();
  if (!existing) {
    write_file_atomically(campaign_file, campaign_json(spec, campaign_id));
  } else if (!known_id) {  // a directory of a version without ids: its records were checked by their cases
    Json id;
    id.type = Json::Type::string;
    id.text = campaign_id;
    existing->members.emplace_back("campaign_id", std::move(id));
    write_file_atomically(campaign_file, to_json_text(*existing, false) + "\n");
  }
  fs::remove(fs::path(spec.out) / "ended.json", ec);  // this run has not ended (write_end_marker)

  std::ofstream seeds(fs::path(spec.out) / "progress.log", std::ios::app);
  CampaignResult result;
  result.resumed = log.records();

  // The records this run still has to produce, when the budget is a case count: counted without
  // generating a case (a count of 2^63 cases must start at once), less each pair found unsupported
  // as the run reaches it.
  std::optional<std::uint64_t> total;
  if (spec.cases) {
    const std::uint64_t cases = *spec.cases > spec.shard.index ? (*spec.cases - spec.shard.index - 1) / spec.shard.count + 1 : 0;
    const std::uint64_t pairs = cases > kAll / spec.impls.size() ? kAll : cases * spec.impls.size();
    total = pairs - std::min<std::uint64_t>(pairs, log.records());
  }
  Progress progress(progress_out, terminal, total, spec.minutes);
  const auto deadline = std::chrono::steady_clock::now() +
                        std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                            std::chrono::duration<double>(spec.minutes.value_or(0) * 60));
  const auto time_left = [&] { return !spec.minutes || std::chrono::steady_clock::now() < deadline; };

  std::uint64_t next_index = spec.shard.index;
  std::size_t next_impl = 0;
  // The next (case, implementation) to run, skipping finished and unsupported ones.
  const auto next_task = [&]() -> std::optional<Task> {
    while (time_left() && (!spec.cases || next_index < *spec.cases)) {
      const std::uint64_t index = next_index;
      const std::string impl = spec.impls[next_impl];
      if (++next_impl == spec.impls.size()) {
        next_impl = 0;
        // Saturating: the last shard's step past a count near 2^64 must not wrap to case 0.
        next_index = next_index > kAll - spec.shard.count ? kAll : next_index + spec.shard.count;
      }
      if (log.done(index, impl)) continue;
      const FuzzCase f = generate_case(spec.generator, index);
      Case c = f.c;
      c.impl = impl;
      if (!find_implementation(impl)->unsupported_reason(c.problem, c.backward).empty()) {
        ++result.unsupported[impl];
        progress.drop_from_total();
        continue;
      }
      return Task{index, impl, c, f.kind, campaign_check_options(spec, c)};
    }
    return std::nullopt;
  };

  const auto record = [&](const Task& t, CaseOutcome o) {
    const CheckOptions& options = t.options;
    std::string failure_file, replay;
    Case saved = t.c;
    if ((o.status == "fail" || o.status == "crash")) {
      std::string note = "fuzz campaign seed " + std::to_string(spec.generator.seed) + ", case " +
                         std::to_string(t.index) + " (" + t.kind + ", " + t.c.problem.describe() + "): " + o.status +
                         (o.why.empty() ? "" : ": " + o.why);
      if (spec.shrink) {
        // Candidates are smaller than the case, so a shorter limit suffices, and a hang then costs
        // minutes, not hours, to shrink.
        const ShrinkResult s = shrink_case(t.c, o, options, (fs::path(spec.out) / ".work" / "shrink").string(),
                                           std::min(spec.case_timeout, 120.0));
        saved = s.c;
        note += "; shrunk in " + std::to_string(s.attempts) + " attempts to " + s.c.problem.describe() +
                (s.outcome.why.empty() ? "" : ": " + s.outcome.why);
      }
      failure_file = "failures/" + t.impl + "-" + std::to_string(t.index) + ".json";
      for (char& ch : failure_file)
        if (ch == ':') ch = '_';
      write_case_file((fs::path(spec.out) / failure_file).string(), saved, options, note);
      replay = "flashproof replay " + shell_quoted((fs::path(spec.out) / failure_file).string());
      result.failure_files.push_back((fs::path(spec.out) / failure_file).string());
    }
    if (o.status == "crash") {  // the child died before measuring it: measured here, over every pair
      const Problem& p = t.c.problem;
      const double pairs_work = static_cast<double>(p.batch) * static_cast<double>(p.heads_q) *
                                static_cast<double>(p.seqlen_q) * static_cast<double>(p.seqlen_k) *
                                static_cast<double>(p.head_dim);
      // In a sampled campaign not beyond kProductionMaxLogitScanWork (an unsampled one's cases are
      // small): "nan" in the record, not measured.
      o.logit_scale = options.reference.sample > 0 && pairs_work > kProductionMaxLogitScanWork
                          ? std::numeric_limits<double>::quiet_NaN()
                          : max_scaled_logit(p, generate_inputs(p, t.c.dist, t.c.seed));
    }
    std::ostringstream line;
    line << "{\"format\": \"flashproof-fuzz-record\", \"version\": 1, \"campaign_seed\": \"" << spec.generator.seed
         << "\", \"campaign_id\": \"" << campaign_id << "\", \"index\": " << t.index << ", \"impl\": " << json_quote(t.impl)
         << ", \"where\": " << json_quote(where_of(o.record_json)) << ", \"status\": " << json_quote(o.status)
         << ", \"kind\": " << json_quote(t.kind) << ", \"logit_scale\": " << json_number(o.logit_scale)
         << ", \"case\": " << one_line(case_to_json(t.c, options))
         << ", \"record\": " << (o.record_json.empty() ? "null" : o.record_json)
         << ", \"error\": " << json_quote(o.why) << ", \"failure_file\": " << json_quote(failure_file)
         << ", \"replay\": " << json_quote(replay) << ", \"seconds\": {\"total\": " << json_number(o.seconds_total)
         << ", \"impl\": " << json_number(o.seconds_impl) << ", \"reference\": " << json_number(o.seconds_reference)
         << ", \"bounds\": " << json_number(o.seconds_bounds) << "}}";
    log.append(line.str());
    ++result.run;
    progress.update(result.run, log.count("fail"), log.count("crash"));
  };

  // With several implementations, those of one case share its reference and baseline through a
  // file (fuzz/case_runner.h), removed once the case's last implementation is recorded. A sampled
  // campaign's file gives each implementation the same sample (recomputed from the case and options).
  const bool share = spec.share_cases && spec.impls.size() > 1;
  const auto shared_file = [&](std::uint64_t index) {
    return share ? (fs::path(spec.out) / ".work" / ("case-" + std::to_string(index) + ".ctx")).string()
                 : std::string();
  };
  std::map<std::uint64_t, int> in_flight;  // running tasks per case index

  std::vector<Running> running;
  int slot = 0;
  for (;;) {
    while (static_cast<int>(running.size()) < spec.jobs) {
      std::optional<Task> t = next_task();
      if (!t) break;
      seeds << "case " << t->index << " impl " << t->impl << " seed " << t->c.seed << " "
            << distribution_name(t->c.dist) << " " << t->c.problem.describe() << (t->c.backward ? " backward" : "")
            << "\n" << std::flush;
      const Case c = t->c;
      const CheckOptions options = t->options;
      const std::string scratch = (fs::path(spec.out) / ".work" / ("job" + std::to_string(slot++ % 1024))).string();
      const std::string shared = shared_file(t->index);
      ++in_flight[t->index];
      auto child = std::make_unique<ChildProcess>([c, options, shared] { return check_in_child(c, options, shared); },
                                                  scratch, spec.case_timeout);
      running.push_back(Running{std::move(*t), std::move(child)});
    }
    if (running.empty()) break;
    bool finished = false;
    for (std::size_t k = 0; k < running.size(); ++k) {
      if (std::optional<ChildEnd> end = running[k].child->poll()) {
        const Task task = std::move(running[k].task);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        record(task, outcome_of(*end));
        --in_flight[task.index];
        // Cases whose tasks have all been issued (the scheduler has moved past them) and ended.
        for (auto it = in_flight.begin(); it != in_flight.end();)
          if (it->second == 0 && it->first < next_index) {
            if (share) fs::remove(shared_file(it->first), ec);
            it = in_flight.erase(it);
          } else {
            ++it;
          }
        finished = true;
        break;
      }
    }
    if (!finished) {  // sleep until a child ends or reaches its time limit (a refresh at least 4 times a second)
      std::vector<ChildProcess*> children;
      for (Running& r : running) children.push_back(r.child.get());
      wait_for_any(children, 0.25);
    }
    progress.update(result.run, log.count("fail"), log.count("crash"));
  }
  progress.finish(result.run, log.count("fail"), log.count("crash"));
  fs::remove_all(fs::path(spec.out) / ".work", ec);
  result.pass = log.count("pass");
  result.fail = log.count("fail");
  result.out_of_domain = log.count("out-of-domain");
  result.not_judged = log.count("not-judged");
  result.crash = log.count("crash");
  write_end_marker(spec, log.records());
  return result;
}

}  // namespace flashproof::fuzz
