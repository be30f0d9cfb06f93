// The JSON reader's cost: duplicate keys are found with a hash set, so a large object parses in
// linear time (a linear search per key made a 1 MiB case file take 15 s).
#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

#include "core/json.h"

namespace flashproof {
namespace {

std::string object_of(int keys, bool repeat_first_at_end) {
  std::string text = "{";
  for (int k = 0; k < keys; ++k) text += (k ? ", \"k" : "\"k") + std::to_string(k) + "\": " + std::to_string(k);
  if (repeat_first_at_end) text += ", \"k0\": 1";
  return text + "}";
}

TEST(Json, ALargeObjectParsesInLinearTime) {
  const std::string text = object_of(200000, false);  // 3 MB: 2e10 key comparisons if quadratic
  const auto start = std::chrono::steady_clock::now();
  const Json j = parse_json(text);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(j.members.size(), 200000u);
  EXPECT_LT(seconds, 2.0);
  try {
    parse_json(object_of(200000, true));
    ADD_FAILURE() << "a duplicate key was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("duplicate key \"k0\""), std::string::npos) << e.what();
  }
}

TEST(Json, PrintableEscapesEveryControlAndKeepsUtf8) {
  EXPECT_EQ(printable("plain text, 1.5 ms"), "plain text, 1.5 ms");
  EXPECT_EQ(printable("a\nb\rc\td\x1b[31m\x7f"), "a\\nb\\rc\\td\\x1b[31m\\x7f");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x88\x9e"), "caf\xc3\xa9 \xe2\x88\x9e");  // UTF-8 stays
  EXPECT_EQ(printable("\xc2\x9b" "2J"), "\\xc2\\x9b2J");                      // C1 CSI
  EXPECT_EQ(printable("\xff\xc3"), "\\xff\\xc3");                              // not UTF-8
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
}

}  // namespace
}  // namespace flashproof
