#include "report/report_command.h"

#include <filesystem>
#include <optional>
#include <stdexcept>

#include "core/json.h"
#include "report/campaign_merge.h"
#include "report/report_files.h"
#include "report/report_model.h"
#include "report/report_text.h"

namespace flashproof::report {
namespace {

constexpr const char* kUsage =
    "usage: flashproof report DIR... --out DIR\n"
    "Merges fuzz campaign directories (shards of one campaign, or several campaigns) and writes\n"
    "OUT/index.html, OUT/summary.md, OUT/results.json and OUT/cases/ (docs/reports.md).\n";

struct Arguments {
  std::vector<std::string> dirs;
  std::string out;
  bool help = false;
};

Arguments parse_arguments(const std::vector<std::string>& args) {
  Arguments a;
  std::optional<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    std::optional<std::string> value;
    if (arg == "--out") {
      if (i + 1 == args.size()) throw std::invalid_argument("--out needs a directory");
      value = args[++i];
    } else if (arg.rfind("--out=", 0) == 0) {
      value = arg.substr(6);
    } else if (arg == "--help" || arg == "-h") {
      a.help = true;
    } else if (arg.size() > 1 && arg[0] == '-') {
      throw std::invalid_argument("unknown option " + arg +
                                  " (usage: flashproof report DIR... --out DIR)");
    } else {
      a.dirs.push_back(arg);
    }
    if (value) {
      if (out) throw std::invalid_argument("--out given twice");
      if (value->empty()) throw std::invalid_argument("--out needs a directory");
      out = value;
    }
  }
  if (a.help) return a;
  if (!out)
    throw std::invalid_argument("missing --out DIR (usage: flashproof report DIR... --out DIR)");
  if (a.dirs.empty())
    throw std::invalid_argument(
        "no campaign directory given (usage: flashproof report DIR... --out DIR)");
  a.out = *out;
  return a;
}

}  // namespace

int report_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  try {
    const Arguments a = parse_arguments(args);
    if (a.help) {
      out << kUsage;
      return 0;
    }
    const Report report = build_report(merge_campaigns(a.dirs), a.out);
    write_report_files(report, a.out);
    for (const std::string& w : report.merged.warnings)
      err << "flashproof report: warning: " << printable(w) << "\n";
    out << "report: " << (std::filesystem::path(a.out) / "index.html").string() << "\n"
        << one_line_summary(report) << "\n";
    return 0;
  } catch (const std::invalid_argument& e) {
    // One line each, control characters escaped: paths and skipped lines come from the inputs.
    err << "flashproof report: " << printable(e.what()) << "\n";
    return 2;
  }
}

}  // namespace flashproof::report
