// core/json.h: the reader's limits and messages, exact integers, its cost on a large object, and
// the writer's layouts and number rules (each layout as a file of the project writes it).
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
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

TEST(Json, PrintableEscapesEveryControlAndKeepsUtf8) {
  EXPECT_EQ(printable("plain text, 1.5 ms"), "plain text, 1.5 ms");
  EXPECT_EQ(printable("a\nb\rc\td\x1b[31m\x7f"), "a\\nb\\rc\\td\\x1b[31m\\x7f");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x88\x9e"), "caf\xc3\xa9 \xe2\x88\x9e");  // UTF-8 stays
  EXPECT_EQ(printable("\xc2\x9b" "2J"), "\\xc2\\x9b2J");                      // C1 CSI
  EXPECT_EQ(printable("\xff\xc3"), "\\xff\\xc3");                              // not UTF-8
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
}

// ---- namespace json ----

std::string parse_error(std::string_view text) {
  try {
    json::parse(text);
    return "(no error)";
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
}

TEST(JsonParse, KeepsTheHostileFileLimits) {
  const auto nested = [](int levels) { return std::string(levels, '[') + std::string(levels, ']'); };
  EXPECT_EQ(parse_error(nested(32)), "(no error)");
  EXPECT_EQ(parse_error(nested(33)), "invalid JSON at line 1, column 33: nested deeper than 32 levels");
  EXPECT_EQ(parse_error("{\"a\": " + nested(40) + "}"),
            "invalid JSON at line 1, column 38: nested deeper than 32 levels");
  EXPECT_EQ(parse_error("{\"a\": 1,\n \"b\\\"\": 2, \"b\\\"\": 3}"),
            "invalid JSON at line 2, column 12: duplicate key \"b\"\"");
  EXPECT_EQ(parse_error("{\"a\": {\"x\": 1}, \"b\": {\"x\": 1}}"), "(no error)");  // per object
  EXPECT_EQ(parse_error("{} x"), "invalid JSON at line 1, column 4: unexpected characters after the top-level value");
  EXPECT_EQ(parse_error("[1] [2]"), "invalid JSON at line 1, column 5: unexpected characters after the top-level value");
  EXPECT_EQ(parse_error(""), "invalid JSON at line 1, column 1: unexpected end of file (truncated?)");
  EXPECT_EQ(parse_error("{\n  \"a\": [1, 2"), "invalid JSON at line 2, column 13: unexpected end of file (truncated?)");
  EXPECT_EQ(parse_error("{\"a\": \"b"), "invalid JSON at line 1, column 9: unexpected end of file (truncated?)");
}

TEST(JsonParse, NamesEachMalformedToken) {
  const std::pair<std::string, std::string> cases[] = {
      {"[\"a\\qb\"]", "line 1, column 5: unknown escape \\q"},
      {"[\"a\\\nb\"]", "line 1, column 5: unknown escape: \\ before byte 0x0a"},
      {"[\"a\nb\"]", "line 1, column 4: control character in a string"},
      {"[\"\\ud800\"]", "high surrogate not followed by a low one"},
      {"[\"\\udc00\"]", "lone low surrogate in a \\u escape"},
      {"[\"\\u12g4\"]", "malformed \\u escape"},
      {"[\"\xff\"]", "a byte in a string that is not UTF-8"},
      {"[-]", "malformed number"},
      {"[01]", "expected ',' or ']'"},
      {"{\"a\": 1 \"b\": 2}", "line 1, column 9: expected ',' or '}'"},
      {"[1e400]", "number beyond the range of a double"},
      {"[fals]", "expected a value"},
      {"{\"a\" 1}", "expected ':'"},
  };
  for (const auto& [text, what] : cases)
    EXPECT_NE(parse_error(text).find(what), std::string::npos) << text << " gave " << parse_error(text);
}

TEST(JsonParse, IntegersAreExact) {
  const json::Value v = json::parse(
      "[18446744073709551615, -9223372036854775808, 9007199254740993, \"18446744073709551615\", "
      "18446744073709551616, 7.0, 1e2, -1, \"-1\", \"\", \" 1\"]");
  EXPECT_EQ(json::unsigned64(v[0]), 18446744073709551615ull);
  EXPECT_EQ(json::integer(v[1]), std::numeric_limits<std::int64_t>::min());
  EXPECT_EQ(json::integer(v[2]), 9007199254740993);  // not a double's neighbour
  EXPECT_EQ(json::unsigned64(v[3]), 18446744073709551615ull);
  EXPECT_EQ(json::integer(v[0]), std::nullopt);
  for (int k : {4, 5, 6}) EXPECT_EQ(json::integer(v[k]), std::nullopt) << k;
  EXPECT_EQ(json::integer(v[7]), -1);
  for (int k : {7, 8, 9, 10}) EXPECT_EQ(json::unsigned64(v[k]), std::nullopt) << k;
  EXPECT_EQ(json::write(v), "[18446744073709551615, -9223372036854775808, 9007199254740993, "
                            "\"18446744073709551615\", 1.8446744073709552e+19, 7, 100, -1, \"-1\", \"\", \" 1\"]");
}

TEST(JsonParse, ALargeObjectParsesInLinearTime) {
  const std::string text = object_of(200000, false);
  const auto start = std::chrono::steady_clock::now();
  const json::Value j = json::parse(text);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(j.size(), 200000u);
  EXPECT_LT(seconds, 2.0);
  EXPECT_NE(parse_error(object_of(200000, true)).find("duplicate key \"k0\""), std::string::npos);
}

TEST(JsonRead, TypedAccessors) {
  const json::Value v = json::parse("{\"x\": 1.5, \"i\": \"inf\", \"m\": \"-inf\", \"n\": \"nan\", \"s\": \"t\", \"b\": true}");
  EXPECT_EQ(json::find(v, "x"), &v.at("x"));
  EXPECT_EQ(json::find(v, "y"), nullptr);
  EXPECT_EQ(json::find(v["x"], "x"), nullptr);
  EXPECT_EQ(json::number(v["x"]), 1.5);
  EXPECT_EQ(json::number(v["i"]), std::nullopt);
  EXPECT_EQ(json::record_number(v["i"]), std::numeric_limits<double>::infinity());
  EXPECT_EQ(json::record_number(v["m"]), -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(*json::record_number(v["n"])));
  EXPECT_EQ(json::record_number(v["s"]), std::nullopt);
  EXPECT_EQ(json::string(v["s"]), "t");
  EXPECT_EQ(json::string(v["b"]), std::nullopt);
}

// A value holding one of everything, and each layout's text of it.
json::Value sample() {
  json::Value v = json::Value::object();
  v["format"] = "sample";
  v["n"] = 3;
  v["x"] = 0.1;
  v["list"] = json::Value::array({1, 2});
  v["empty"] = json::Value::array();
  v["inner"] = {{"a", nullptr}, {"b", false}, {"c", json::Value::object()}};
  v["s"] = "q\"\\\b\f\n\r\t\x01/\x7f caf\xc3\xa9";
  return v;
}

TEST(JsonWrite, OneLine) {
  EXPECT_EQ(json::write(sample()),
            "{\"format\": \"sample\", \"n\": 3, \"x\": 0.10000000000000001, \"list\": [1, 2], \"empty\": [], "
            "\"inner\": {\"a\": null, \"b\": false, \"c\": {}}, "
            "\"s\": \"q\\\"\\\\\\b\\f\\n\\r\\t\\u0001/\x7f caf\xc3\xa9\"}");
}

TEST(JsonWrite, IndentedAsCaseFiles) {
  json::Value v = sample();
  v.erase("s");
  const std::string text =
      "{\n  \"format\": \"sample\",\n  \"n\": 3,\n  \"x\": 0.10000000000000001,\n  \"list\": [\n    1,\n    2\n  ],\n"
      "  \"empty\": [],\n  \"inner\": {\n    \"a\": null,\n    \"b\": false,\n    \"c\": {}\n  }\n}";
  EXPECT_EQ(json::write(v, json::indented()), text);
  EXPECT_EQ(json::write(json::parse(text), json::indented()), text);
  // How a fuzz record embeds a case file: the same text without its line breaks.
  EXPECT_EQ(json::write(v, json::unbroken(json::indented())),
            "{\"format\": \"sample\",\"n\": 3,\"x\": 0.10000000000000001,\"list\": [1,2],\"empty\": [],"
            "\"inner\": {\"a\": null,\"b\": false,\"c\": {}}}");
}

TEST(JsonWrite, TopLines) {
  json::Value v = sample();
  v.erase("s");
  EXPECT_EQ(json::write(v, json::top_lines()),
            "{\n  \"format\": \"sample\",\n  \"n\": 3,\n  \"x\": 0.10000000000000001,\n  \"list\": [1, 2],\n"
            "  \"empty\": [],\n  \"inner\": {\"a\": null, \"b\": false, \"c\": {}}\n}");
}

// The check record's layout: grouped members, one-line members with breaks inside, and rules for
// an array's items.
TEST(JsonWrite, RulesPerMember) {
  const json::Value v = json::parse(
      "{\"case\": {\"k\": 1}, \"a\": true, \"b\": 2, \"ref\": {\"x\": 1, \"rows\": [1, 2]},"
      " \"items\": [{\"n\": 1, \"e\": {\"q\": 1}}, {\"n\": 2, \"e\": {}}], \"end\": 0}");
  json::Layout item, ref, items, root = json::indented();
  item.new_line = {{"e", 5}};
  ref.new_line = {{"rows", 4}};
  items.indented = true;
  items.inner = {{"*", item}};
  root.same_line = {"b"};
  root.inner = {{"ref", ref}, {"items", items}, {"*", json::one_line()}};
  const std::string text =
      "{\n  \"case\": {\"k\": 1},\n  \"a\": true, \"b\": 2,\n  \"ref\": {\"x\": 1,\n    \"rows\": [1, 2]},\n"
      "  \"items\": [\n    {\"n\": 1,\n     \"e\": {\"q\": 1}},\n    {\"n\": 2,\n     \"e\": {}}\n  ],\n  \"end\": 0\n}";
  EXPECT_EQ(json::write(v, root), text);
  EXPECT_EQ(json::write(v, json::unbroken(root)),
            "{\"case\": {\"k\": 1},\"a\": true, \"b\": 2,\"ref\": {\"x\": 1,\"rows\": [1, 2]},"
            "\"items\": [{\"n\": 1,\"e\": {\"q\": 1}},{\"n\": 2,\"e\": {}}],\"end\": 0}");
}

TEST(JsonWrite, NumberRules) {
  const json::Value v = json::Value::array({0.1, 1.0 / 3, 2.0, -0.0, 1e300, 123456789012.0,
                                            std::numeric_limits<double>::infinity(),
                                            -std::numeric_limits<double>::infinity(),
                                            std::numeric_limits<double>::quiet_NaN(), -7, 18446744073709551615ull});
  EXPECT_EQ(json::write(v, json::one_line(json::Digits::g17)),
            "[0.10000000000000001, 0.33333333333333331, 2, -0, 1.0000000000000001e+300, 123456789012, "
            "\"inf\", \"-inf\", \"nan\", -7, 18446744073709551615]");
  EXPECT_EQ(json::write(v, json::one_line(json::Digits::shortest)),
            "[0.1, 0.3333333333333333, 2, -0, 1e+300, 123456789012, \"inf\", \"-inf\", \"nan\", -7, 18446744073709551615]");
  EXPECT_EQ(json::write(v, json::one_line(json::Digits::g6)),
            "[0.1, 0.333333, 2, -0, 1e+300, 1.23457e+11, \"inf\", \"-inf\", \"nan\", -7, 18446744073709551615]");
  EXPECT_EQ(json::write(json::Value::array({0.0001, 8.3406e-05, 10063.7}), json::one_line(json::Digits::g6)),
            "[0.0001, 8.3406e-05, 10063.7]");
  EXPECT_EQ(json::write(v, json::one_line(json::Digits::g9)),
            "[0.1, 0.333333333, 2, -0, 1e+300, 1.23456789e+11, \"inf\", \"-inf\", \"nan\", -7, 18446744073709551615]");
  // Each reads back as the same double.
  const json::Value back = json::parse(json::write(v));
  for (std::size_t k = 0; k < 6; ++k) EXPECT_EQ(back[k].get<double>(), v[k].get<double>()) << k;
  EXPECT_TRUE(std::signbit(back[3].get<double>())) << "-0 reads back as -0.0";
  for (const char* text : {"-0", "[-0]", "[0, -0 ]", "{\"a\": -0}"}) {
    const json::Value z = json::parse(text);
    EXPECT_EQ(json::write(z), text[0] == '[' ? (text[1] == '0' ? "[0, -0]" : "[-0]") : text) << text;
  }
  EXPECT_TRUE(json::parse("[0, 10, 0]")[0].is_number_unsigned());
  // A subtree can keep other digits than its container's.
  json::Layout l = json::one_line(json::Digits::shortest);
  l.inner = {{"kept", json::one_line(json::Digits::g17)}};
  EXPECT_EQ(json::write(json::Value{{"a", 0.1}, {"kept", {{"b", 0.1}}}}, l),
            "{\"a\": 0.1, \"kept\": {\"b\": 0.10000000000000001}}");
}

TEST(JsonWrite, BytesThatAreNotUtf8BecomeReplacementCharacters) {
  const std::string text = json::write(json::Value("a\xff\xc3(\xed\xa0\x80\xe2\x88\x9e"));
  EXPECT_EQ(text, "\"a\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xe2\x88\x9e\"");
  EXPECT_EQ(json::parse(text).get<std::string>(), "a\xef\xbf\xbd\xef\xbf\xbd(\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xe2\x88\x9e");
}

TEST(JsonWrite, RoundTrip) {
  const json::Value v = sample();
  for (const json::Layout& l : {json::one_line(), json::indented(), json::unbroken(json::indented())})
    EXPECT_EQ(json::parse(json::write(v, l)), v);
}

}  // namespace
}  // namespace flashproof
