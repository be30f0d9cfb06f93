#include "harness/case_file.h"
#include "harness/records.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace flashproof {

json::Value case_json(const Case& c, const CheckOptions& o, const std::string& note,
                      const std::string& property) {
  try {
    return json::Value(CaseFile{c, o, note, property});
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(std::string("case file: ") + e.what());
  }
}

std::string case_to_json(const Case& c, const CheckOptions& o, const std::string& note,
                         const std::string& property) {
  // A packed batch's offsets on one line each: thousands of sequences stay thousands of numbers,
  // not thousands of lines.
  json::Layout layout = json::indented();
  for (const char* offsets : {"cu_seqlens_q", "cu_seqlens_k", "alibi_slopes"}) layout.inner.emplace_back(offsets, json::one_line());
  return json::write(case_json(c, o, note, property), layout) + "\n";
}

CaseFile case_from_json(std::string_view text, const std::string& source) {
  try {
    return json::parse(text).get<CaseFile>();
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument("case file " + source + ": " + e.what());
  }
}

void write_case_file(const std::string& path, const Case& c, const CheckOptions& options,
                     const std::string& note, const std::string& property) {
  const std::string text = case_to_json(c, options, note, property);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) out << text;
  if (out) out.close();
  if (!out)
    throw std::invalid_argument("cannot write case file " + path + ": " + std::strerror(errno));
}

CaseFile read_case_file(const std::string& path) {
  namespace fs = std::filesystem;
  auto fail = [&](const std::string& why) {
    throw std::invalid_argument("case file " + path + ": " + why);
  };
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  if (!fs::exists(st)) fail("does not exist");
  if (fs::is_directory(st)) fail("is a directory");
  if (!fs::is_regular_file(st)) fail("is not a regular file");
  if (const auto size = fs::file_size(path, ec); !ec && size > (std::uintmax_t{1} << 20))
    fail("larger than 1 MiB, not a case file");
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  if (in) text << in.rdbuf();
  if (!in) fail(std::string("cannot read: ") + std::strerror(errno));
  return case_from_json(text.str(), path);
}

}  // namespace flashproof
