#include "cli/command_line.h"

#include <stdexcept>
#include <utility>

#include <CLI/CLI.hpp>

#include "cli/help_format.h"
#include "cli/option_syntax.h"
#include "cli/option_values.h"

namespace flashproof::cli {
namespace {

std::string verb_list() {
  std::string names;
  for (const char* verb : kVerbs) names += (names.empty() ? "" : ", ") + std::string(verb);
  return names;
}

// The top level's help: the usage, the verbs with what each does, and the environment.
std::string top_level_help(const CLI::App* app) {
  std::string text = "usage: flashproof VERB [options]   (flashproof VERB --help: the verb's options)\n" +
                     app->get_description() + "\n";
  text += CLI::Formatter().make_subcommands(app, CLI::AppFormatMode::Normal);
  return text + "\n" + app->get_footer() + "\n";
}

CLI::App& add_verb(CLI::App& app, const std::string& name, const std::string& description, std::string synopsis) {
  CLI::App& verb = *app.add_subcommand(name, description);
  verb.set_help_flag("-h,--help", "print this help and exit");
  verb.allow_extras();  // what no option claims is reported by the verb, with its own words
  set_verb_help(verb, std::move(synopsis));
  return verb;
}

}  // namespace

struct CommandLine::Parts {
  CLI::App app{"Checks FlashAttention implementations against a rigorous reference: single cases, fuzz\n"
               "campaigns, reports, proofs of the algorithms' steps (docs/usage.md).",
               "flashproof"};
  CheckCommand check;
  ReplayCommand replay;
  ProveCommand prove;
  FuzzCommand fuzz;
  ExportCommand exported;
  ReportCommand report;
  bool parsed = false;
};

CommandLine::CommandLine() : parts_(std::make_unique<Parts>()) {
  CLI::App& app = parts_->app;
  app.set_help_flag("-h,--help", "print this help and exit");
  app.require_subcommand(0, 1);  // after the verb, another verb's name is a plain argument
  app.allow_extras();
  app.footer(
      "environment: FLASHPROOF_IMPORT=DIR registers imported:<backend> for the outputs under an\n"
      "             exported DIR (docs/exchange.md) before any command runs");
  app.formatter_fn([](const CLI::App* a, std::string, CLI::AppFormatMode) { return top_level_help(a); });
  add_verb(app, "list", "print the implementations: name, where it runs, what it is", "flashproof list");
  add_check_options(add_verb(app, "check", "check one case of one implementation against the reference (exit 1: fail)",
                             "flashproof check [options]"),
                    parts_->check);
  add_replay_options(add_verb(app, "replay", "check a saved case again with its saved check options",
                              "flashproof replay FILE [options]"),
                     parts_->replay);
  add_prove_options(add_verb(app, "prove", "prove the algorithms' steps with Z3, and refute each proof's twin",
                             "flashproof prove [NAME...] [options]"),
                    parts_->prove);
  add_fuzz_options(add_verb(app, "fuzz", "run a fuzz campaign of generated cases (docs/fuzz.md)",
                            "flashproof fuzz --seed S (--cases N | --minutes M) --out DIR [options]"),
                   parts_->fuzz);
  CLI::App& report = add_verb(app, "report", "merge fuzz campaign directories (shards of one campaign, or several campaigns) into one "
                              "report: index.html, summary.md, results.json, cases/ (docs/reports.md)",
                              report::kReportSynopsis);
  report::add_report_options(report, parts_->report.arguments);
  add_export_options(add_verb(app, "export", "write a campaign's cases for an implementation that runs elsewhere "
                                             "(docs/exchange.md)",
                              "flashproof export --seed S --cases N --out DIR [options]"),
                     parts_->exported);
}

CommandLine::~CommandLine() = default;

const CLI::App& CommandLine::app() const { return parts_->app; }

Command CommandLine::parse(const std::vector<std::string>& args) {
  Parts& p = *parts_;
  if (p.parsed) throw std::logic_error("CommandLine::parse: once per CommandLine");
  p.parsed = true;
  if (args.empty()) throw UsageError("missing command (" + verb_list() + ")");
  const std::string& name = args.front();
  if (name == "--help" || name == "-h" || name == "help") return HelpRequest{p.app.help()};
  CLI::App* verb = nullptr;
  for (const char* known : kVerbs) verb = name == known ? p.app.get_subcommand(known) : verb;
  if (verb == nullptr) throw UsageError("unknown command '" + name + "' (" + verb_list() + ")");
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (normalize_option_syntax(*verb, rest)) return HelpRequest{verb->help()};
  std::vector<std::string> reversed(rest.rbegin(), rest.rend());  // CLI11 takes them last first
  reversed.push_back(name);
  try {
    p.app.parse(reversed);
    if (name == "list") {
      if (!unexpected_arguments(*verb).empty()) throw UsageError("list takes no arguments");
      return ListCommand{};
    }
    if (name == "check") {
      for (const std::string& extra : unexpected_arguments(*verb))
        throw UsageError("unknown option '" + extra + "' for check");
      finish_check_options(p.check);
      return std::move(p.check);
    }
    if (name == "replay") return finish_replay_options(*verb, p.replay), std::move(p.replay);
    if (name == "prove") return finish_prove_options(*verb), std::move(p.prove);
    if (name == "fuzz") return finish_fuzz_options(*verb, p.fuzz), std::move(p.fuzz);
    if (name == "export") return finish_export_options(*verb, p.exported), std::move(p.exported);
    report::check_report_arguments(*verb, p.report.arguments);
    return std::move(p.report);
  } catch (const CLI::CallForHelp&) {
    return HelpRequest{verb->help()};
  } catch (const CLI::ParseError& e) {
    // Not met with the options declared here (normalize_option_syntax takes the cases CLI11
    // words in several lines); its first line, should one come.
    const std::string what = e.what();
    throw UsageError(what.substr(0, what.find('\n')));
  } catch (const std::invalid_argument& e) {  // the fuzz library's and report's value checks
    throw UsageError(e.what());
  }
}

Command parse_command_line(const std::vector<std::string>& args) { return CommandLine().parse(args); }

}  // namespace flashproof::cli
