#include "report/report_files.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/json.h"
#include "report/html_page.h"
#include "report/results_json.h"
#include "report/summary_markdown.h"

namespace flashproof::report {
namespace {

namespace fs = std::filesystem;

void write_file(const fs::path& path, const std::string& text) {
  fs::path partial = path;
  partial += ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    if (out) out << text;
    if (!out || !out.flush())
      throw std::invalid_argument("cannot write " + partial.string() + ": " + std::strerror(errno));
  }
  std::error_code ec;
  fs::rename(partial, path, ec);
  if (ec) throw std::invalid_argument("cannot write " + path.string() + ": " + ec.message());
}

}  // namespace

void write_report_files(const Report& report, const std::string& out_dir) {
  const fs::path out(out_dir);
  std::error_code ec;
  fs::create_directories(out / "cases", ec);
  if (ec)
    throw std::invalid_argument("cannot create " + (out / "cases").string() + ": " + ec.message());
  for (const DtypeReport& d : report.dtypes)
    for (const ListedWorstCase& w : d.worst)
      if (!w.case_file.empty()) {
        // Laid out as the case-file writer lays it out, numbers as it writes them (%.17g).
        const json::Value& case_file = report.merged.records[w.worst.record].case_file;
        write_file(out / w.case_file, json::write(case_file, json::indented(json::Digits::g17)) + "\n");
      }
  write_file(out / "results.json", json::write(results_json(report), results_layout()) + "\n");
  write_file(out / "summary.md", summary_markdown(report));
  write_file(out / "index.html", html_page(report));
}

}  // namespace flashproof::report
