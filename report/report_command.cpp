#include "report/report_command.h"

#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "core/json.h"
#include "report/campaign_merge.h"
#include "report/report_files.h"
#include "report/report_model.h"
#include "report/report_text.h"

namespace flashproof::report {
namespace {

constexpr const char* kReportDescription =
    "Merges fuzz campaign directories (shards of one campaign, or several campaigns) and writes\n"
    "OUT/index.html, OUT/summary.md, OUT/results.json and OUT/cases/ (docs/reports.md).";

const std::string kUsageHint = std::string(" (usage: ") + kReportSynopsis + ")";

// The usage line first, then the description and every option (as `flashproof VERB --help` lays
// out the other verbs, cli/help_format.h).
std::string report_help(const CLI::App* app) {
  const CLI::Formatter columns;
  std::string text = std::string("usage: ") + kReportSynopsis + "\n" + app->get_description() + "\n";
  text += columns.make_positionals(app) + columns.make_groups(app, CLI::AppFormatMode::Normal);
  return app->get_footer().empty() ? text : text + "\n" + app->get_footer() + "\n";
}

}  // namespace

void add_report_options(CLI::App& verb, ReportArguments& into) {
  verb.add_option("DIR", into.dirs, "the campaign directories (fuzz --out) to merge")->type_name("");
  verb.add_option_function<std::string>(
          "--out",
          [&into](const std::string& v) {
            if (!into.out.empty()) throw std::invalid_argument("--out given twice");
            if (v.empty()) throw std::invalid_argument("--out needs a directory");
            into.out = v;
          },
          "the report's directory (required)")
      ->type_name("DIR")
      ->expected(0, 1)  // a missing value reaches the callback as "" and is named there
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeLast)
      ->trigger_on_parse();
  verb.formatter_fn([](const CLI::App* app, std::string, CLI::AppFormatMode) { return report_help(app); });
}

void check_report_arguments(const CLI::App& verb, const ReportArguments& arguments) {
  std::vector<std::string> left = verb.remaining();
  if (const CLI::App* parent = verb.get_parent()) {
    const std::vector<std::string> above = parent->remaining();
    left.insert(left.end(), above.begin(), above.end());
  }
  std::erase(left, "--");
  if (!left.empty()) throw std::invalid_argument("unknown option " + left.front() + kUsageHint);
  if (arguments.out.empty()) throw std::invalid_argument("missing --out DIR" + kUsageHint);
  if (arguments.dirs.empty()) throw std::invalid_argument("no campaign directory given" + kUsageHint);
}

int run_report(const ReportArguments& arguments, std::ostream& out, std::ostream& err) {
  try {
    const Report report = build_report(merge_campaigns(arguments.dirs), arguments.out);
    write_report_files(report, arguments.out);
    for (const std::string& w : report.merged.warnings)
      err << "flashproof report: warning: " << printable(w) << "\n";
    out << "report: " << (std::filesystem::path(arguments.out) / "index.html").string() << "\n"
        << one_line_summary(report) << "\n";
    return 0;
  } catch (const std::invalid_argument& e) {
    // One line each, control characters escaped: paths and skipped lines come from the inputs.
    err << "flashproof report: " << printable(e.what()) << "\n";
    return 2;
  }
}

int report_command(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  CLI::App verb(kReportDescription, "flashproof report");
  verb.allow_extras();
  ReportArguments arguments;
  add_report_options(verb, arguments);
  try {
    std::vector<std::string> reversed(args.rbegin(), args.rend());  // CLI11 takes them last first
    verb.parse(reversed);
    check_report_arguments(verb, arguments);
  } catch (const CLI::CallForHelp&) {
    out << verb.help();
    return 0;
  } catch (const CLI::ParseError& e) {
    const std::string what = e.what();
    err << "flashproof report: " << printable(what.substr(0, what.find('\n'))) << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    err << "flashproof report: " << printable(e.what()) << "\n";
    return 2;
  }
  return run_report(arguments, out, err);
}

}  // namespace flashproof::report
