// core/json.h's writer: what parse_json reads is written back unchanged (numbers keep their
// text), in one line or as case files are laid out.
#include <gtest/gtest.h>

#include "campaign_fixture.h"
#include "core/json.h"

namespace flashproof {
namespace {

TEST(JsonWriter, WritesOneLineWithSpacesAfterColonsAndCommas) {
  const Json v = parse_json(R"({"a":1.50,"b":[true,false,null],"c":{},"d":[],"e":"x\"y\n"})");
  EXPECT_EQ(to_json_text(v, true),
            R"({"a": 1.50, "b": [true, false, null], "c": {}, "d": [], "e": "x\"y\n"})");
}

TEST(JsonWriter, IndentsOneMemberPerLineLikeCaseFiles) {
  const Json v = parse_json(R"({"a": 1, "b": {"c": [2, "3"]}})");
  EXPECT_EQ(to_json_text(v, false),
            "{\n  \"a\": 1,\n  \"b\": {\n    \"c\": [\n      2,\n      \"3\"\n    ]\n  }\n}");
  EXPECT_EQ(to_json_text(parse_json("[]"), false), "[]");
  EXPECT_EQ(to_json_text(parse_json("17"), false), "17");
}

TEST(JsonWriter, WritesACaseFileBackByteForByte) {
  const std::string text = report::testing::case_object_text(report::testing::standard_record('H'));
  EXPECT_EQ(to_json_text(parse_json(text), false), text);
}

TEST(JsonWriter, KeepsLargeIntegersAndExponentsExactly) {
  const std::string text =
      R"({"seed": 18446744073709551615, "x": -2.0994975127877456e-15, "s": "\u00e9"})";
  const Json once = parse_json(text);
  EXPECT_EQ(to_json_text(once, true),
            R"({"seed": 18446744073709551615, "x": -2.0994975127877456e-15, "s": "é"})");
  const Json twice = parse_json(to_json_text(once, false));
  EXPECT_EQ(to_json_text(twice, true), to_json_text(once, true));
}

}  // namespace
}  // namespace flashproof
