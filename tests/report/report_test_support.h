// Running `report` on the standard fixture and looking up results.json's parts, for the tests.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "campaign_fixture.h"
#include "core/json.h"
#include "report/report_command.h"
#include "report/results_json.h"

namespace flashproof::report::testing {

struct CommandResult {
  int status = -1;
  std::string out, err;
};

inline CommandResult run_report(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  CommandResult r;
  r.status = report_command(args, out, err);
  r.out = out.str();
  r.err = err.str();
  return r;
}

// The items of an array; none (failing the test) when v is not one.
inline const json::Value::array_t& items(const json::Value& v) {
  static const json::Value::array_t none;
  if (v.is_array()) return v.get_ref<const json::Value::array_t&>();
  ADD_FAILURE() << "not an array: " << json::write(v);
  return none;
}

// A string's own text; anything else as results.json writes it (a number as its shortest
// round-trip text, which read_results checked is how the file holds it).
inline std::string text_of(const json::Value& v) {
  return v.is_string() ? v.get<std::string>() : json::write(v, json::one_line(json::Digits::shortest));
}

// The element of array whose member key is value; fails the test when absent.
inline const json::Value& element(const json::Value* array, const std::string& key, const std::string& value) {
  static const json::Value none;
  if (array != nullptr)
    for (const json::Value& item : items(*array))
      if (const json::Value* v = json::find(item, key); v != nullptr && v->is_string() && text_of(*v) == value)
        return item;
  ADD_FAILURE() << "no element with " << key << " = " << value;
  return none;
}

inline const json::Value& dtype_of(const json::Value& results, const std::string& dtype) {
  return element(json::find(results, "dtypes"), "dtype", dtype);
}
inline const json::Value& impl_of(const json::Value& results, const std::string& dtype, const std::string& impl) {
  return element(json::find(dtype_of(results, dtype), "impls"), "impl", impl);
}
inline const json::Value& tensor_of(const json::Value& results, const std::string& dtype, const std::string& impl,
                                    const std::string& tensor) {
  return element(json::find(impl_of(results, dtype, impl), "tensors"), "name", tensor);
}

// The member at a path of keys, e.g. at(t, {"max_ulps", "p50"}); fails the test when absent.
inline const json::Value& at(const json::Value& v, std::initializer_list<const char*> keys) {
  static const json::Value none;
  const json::Value* x = &v;
  for (const char* k : keys) {
    x = json::find(*x, k);
    if (x == nullptr) {
      ADD_FAILURE() << "no member " << k;
      return none;
    }
  }
  return *x;
}

// A member as text (text_of): "inf" for an infinite number, "null" for null.
inline std::string text_at(const json::Value& v, std::initializer_list<const char*> keys) {
  return text_of(at(v, keys));
}

// A number member's value: a JSON number or "inf", "-inf", "nan"; NaN otherwise (failing the test).
inline double number_at(const json::Value& v, std::initializer_list<const char*> keys) {
  const json::Value& x = at(v, keys);
  if (const std::optional<double> number = json::record_number(x)) return *number;
  ADD_FAILURE() << "not a number: " << json::write(x);
  return std::numeric_limits<double>::quiet_NaN();
}

// A report's results.json, parsed. It must be written exactly as results_layout() writes what it
// holds, so that a number's text is text_of's (and not, say, "14.0" for 14) and the layout is kept.
inline json::Value read_results(const std::filesystem::path& file) {
  const std::string text = read_text(file);
  json::Value results = json::parse(text);
  EXPECT_EQ(json::write(results, results_layout()) + "\n", text) << file;
  return results;
}

// The standard campaign reported into ROOT/out, with results.json parsed.
class StandardReport : public ::testing::Test {
 protected:
  void SetUp() override {
    write_standard_campaign(dir.path());
    run = run_report({dir / "shard0", dir / "shard1", "--out", dir / "out"});
    ASSERT_EQ(run.status, 0) << run.err;
    results = read_results(dir.path() / "out" / "results.json");
  }

  TempDir dir;
  CommandResult run;
  json::Value results;
};

}  // namespace flashproof::report::testing
