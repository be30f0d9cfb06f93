#include "cli/help_format.h"

#include <memory>
#include <utility>

namespace flashproof::cli {

void set_verb_help(CLI::App& verb, std::string synopsis) {
  verb.formatter_fn([synopsis = std::move(synopsis)](const CLI::App* app, std::string, CLI::AppFormatMode) {
    CLI::Formatter columns;
    columns.column_width(34);
    std::string text = "usage: " + synopsis + "\n" + app->get_description() + "\n";
    text += columns.make_positionals(app) + columns.make_groups(app, CLI::AppFormatMode::Normal);
    if (!app->get_footer().empty()) text += "\n" + app->get_footer() + "\n";
    return text;
  });
}

}  // namespace flashproof::cli
