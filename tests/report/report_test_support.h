// Running `report` on the standard fixture and looking up results.json's parts, for the tests.
#pragma once

#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "campaign_fixture.h"
#include "core/json.h"
#include "report/report_command.h"

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

// The element of array whose member key is value; fails the test when absent.
inline const Json& element(const Json* array, const std::string& key, const std::string& value) {
  static const Json none;
  if (array != nullptr)
    for (const Json& item : array->items)
      if (const Json* v = item.find(key); v != nullptr && v->text == value) return item;
  ADD_FAILURE() << "no element with " << key << " = " << value;
  return none;
}

inline const Json& dtype_of(const Json& results, const std::string& dtype) {
  return element(results.find("dtypes"), "dtype", dtype);
}
inline const Json& impl_of(const Json& results, const std::string& dtype, const std::string& impl) {
  return element(dtype_of(results, dtype).find("impls"), "impl", impl);
}
inline const Json& tensor_of(const Json& results, const std::string& dtype, const std::string& impl,
                             const std::string& tensor) {
  return element(impl_of(results, dtype, impl).find("tensors"), "name", tensor);
}

// The member at a path of keys, e.g. at(t, {"max_ulps", "p50"}); fails the test when absent.
inline const Json& at(const Json& v, std::initializer_list<const char*> keys) {
  static const Json none;
  const Json* x = &v;
  for (const char* k : keys) {
    x = x->find(k);
    if (x == nullptr) {
      ADD_FAILURE() << "no member " << k;
      return none;
    }
  }
  return *x;
}

// A number member as text exactly as written (non-finite numbers are the strings "inf", ...).
inline std::string text_at(const Json& v, std::initializer_list<const char*> keys) {
  const Json& x = at(v, keys);
  return x.type == Json::Type::null ? "null" : x.text;
}

// A number member's value: a JSON number or "inf", "-inf", "nan"; NaN otherwise (failing the test).
inline double number_at(const Json& v, std::initializer_list<const char*> keys) {
  const Json& x = at(v, keys);
  if (x.type == Json::Type::number) return x.number();
  if (x.type == Json::Type::string && x.text == "inf") return kInf;
  if (x.type == Json::Type::string && x.text == "-inf") return -kInf;
  if (!(x.type == Json::Type::string && x.text == "nan"))
    ADD_FAILURE() << "not a number: " << x.text;
  return std::numeric_limits<double>::quiet_NaN();
}

// The standard campaign reported into ROOT/out, with results.json parsed.
class StandardReport : public ::testing::Test {
 protected:
  void SetUp() override {
    write_standard_campaign(dir.path());
    run = run_report({dir / "shard0", dir / "shard1", "--out", dir / "out"});
    ASSERT_EQ(run.status, 0) << run.err;
    results = parse_json(read_text(dir.path() / "out" / "results.json"));
  }

  TempDir dir;
  CommandResult run;
  Json results;
};

}  // namespace flashproof::report::testing
