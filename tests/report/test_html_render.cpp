// The report's page as a user sees it: headless Chromium renders index.html to a PNG and dumps
// the rendered DOM. Chromium is a dependency (scripts/install-deps.sh): its absence fails.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "report_test_support.h"

namespace flashproof::report::testing {
namespace {

namespace fs = std::filesystem;

std::string find_chromium() {
  for (const char* name : {"chromium", "chromium-browser"})
    if (std::system(("command -v " + std::string(name) + " >/dev/null 2>&1").c_str()) == 0)
      return name;
  return "";
}

// Runs chromium headless on the page with extra arguments, output to a file.
int chromium(const std::string& browser, const TempDir& dir, const std::string& args,
             const fs::path& page, const fs::path& output) {
  const std::string command = "timeout 120 " + browser +
                              " --headless --no-sandbox --disable-gpu --hide-scrollbars"
                              " --user-data-dir=" +
                              (dir / "profile") + " " + args + " file://" + page.string() + " >" +
                              output.string() + " 2>" + (dir / "chromium.log");
  return std::system(command.c_str());
}

std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

TEST_F(StandardReport, RendersInHeadlessChromium) {
  const std::string browser = find_chromium();
  ASSERT_FALSE(browser.empty()) << "chromium is not on PATH: run scripts/install-deps.sh";
  const fs::path page = dir.path() / "out" / "index.html";

  const fs::path png = dir.path() / "page.png";
  ASSERT_EQ(chromium(browser, dir, "--window-size=1400,2600 --screenshot=" + png.string(), page,
                     dir.path() / "screenshot.out"),
            0)
      << read_text(dir.path() / "chromium.log");
  ASSERT_TRUE(fs::is_regular_file(png)) << read_text(dir.path() / "chromium.log");
  const std::string image = read_text(png);
  EXPECT_EQ(image.substr(1, 3), "PNG");
  // A blank 1400 x 2600 page compresses to a few kilobytes; tables and plots take far more.
  EXPECT_GT(image.size(), 100'000u);

  const fs::path dom = dir.path() / "dom.html";
  ASSERT_EQ(chromium(browser, dir, "--dump-dom", page, dom), 0)
      << read_text(dir.path() / "chromium.log");
  const std::string rendered = read_text(dom);
  // Per dtype: status, errors, bound, worst-case tables (and failures for fp16); the inputs and the
  // judged tables.
  EXPECT_EQ(occurrences(rendered, "<table>"), 2u + 5u + 4u);
  EXPECT_NE(rendered.find("records, |scale q.k| "), std::string::npos);
  EXPECT_EQ(occurrences(rendered, "<svg"), 11u);
  EXPECT_GE(occurrences(rendered, "<circle"), 20u);
  EXPECT_NE(rendered.find("fp16 O: error vs logit_scale"), std::string::npos);
  EXPECT_NE(rendered.find("cases/fp16-fa2-6.json"), std::string::npos);
}

}  // namespace
}  // namespace flashproof::report::testing
