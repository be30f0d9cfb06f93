#include "harness/case_file.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <utility>
#include <vector>

namespace flashproof {
namespace {

// ---- Typed access to an object's fields; every message names the field. ----

class Fields {
 public:
  Fields(const json::Value& object, std::string prefix)
      : o_(object.get_ref<const json::Value::object_t&>()), prefix_(std::move(prefix)) {
    used_.assign(o_.size(), false);
  }
  std::string name(std::string_view key) const { return "\"" + prefix_ + std::string(key) + "\""; }

  const json::Value* optional(std::string_view key) {
    for (std::size_t k = 0; k < o_.size(); ++k)
      if (o_.begin()[k].first == key) {
        used_[k] = true;
        return &o_.begin()[k].second;
      }
    return nullptr;
  }
  const json::Value& required(std::string_view key) {
    if (const json::Value* v = optional(key)) return *v;
    throw std::invalid_argument("missing field " + name(key));
  }
  // Unknown fields are rejected (a misspelt optional field would otherwise be ignored silently).
  void reject_unknown() const {
    for (std::size_t k = 0; k < o_.size(); ++k)
      if (!used_[k])
        throw std::invalid_argument("unknown field \"" + prefix_ + shown(o_.begin()[k].first).substr(1));
  }

  std::string string(std::string_view key, const json::Value& v) const {
    return required_kind(json::string(v), key, " must be a string");
  }
  bool boolean(std::string_view key, const json::Value& v) const {
    if (!v.is_boolean()) throw std::invalid_argument(name(key) + " must be true or false");
    return v.get<bool>();
  }
  std::int64_t integer(std::string_view key, const json::Value& v) const {
    return required_kind(json::integer(v), key, " must be an integer");
  }
  // A decimal string (how case_to_json writes it) or a plain integer.
  std::uint64_t unsigned64(std::string_view key, const json::Value& v) const {
    return required_kind(json::unsigned64(v), key, " must be an unsigned 64-bit integer (a decimal string, e.g. \"42\")");
  }
  double number(std::string_view key, const json::Value& v) const {
    const std::optional<double> x = json::number(v);
    return required_kind(x && std::isfinite(*x) ? x : std::nullopt, key, " must be a finite number");
  }

 private:
  template <class T>
  T required_kind(std::optional<T> x, std::string_view key, const char* otherwise) const {
    if (!x) throw std::invalid_argument(name(key) + otherwise);
    return *std::move(x);
  }
  const json::Value::object_t& o_;
  std::string prefix_;
  std::vector<bool> used_;
};

// ---- Writing ----

}  // namespace


namespace {

// Written with 17 significant digits (reads back as the same double); JSON has no non-finite
// number, and a case file is read as written.
double finite(const char* what, double x) {
  if (!std::isfinite(x))
    throw std::invalid_argument(std::string("case file: ") + what + " is not finite and cannot be saved");
  return x;
}

const reference::Backend kBackends[] = {reference::Backend::fast, reference::Backend::mpfr,
                                        reference::Backend::cpp_bin_float};

const char* relative_to_name(reference::Options::RelativeTo r) {
  return r == reference::Options::RelativeTo::value ? "value" : "magnitude";
}

CaseFile parse_case(const json::Value& top) {
  if (!top.is_object())
    throw std::invalid_argument("not a flashproof case file (not a JSON object)");
  Fields f(top, "");
  const json::Value* format = f.optional("format");
  if (!format || json::string(*format) != kCaseFileFormat)
    throw std::invalid_argument(std::string("not a flashproof case file (no \"format\": \"") +
                                kCaseFileFormat + "\")");
  const std::int64_t version = f.integer("version", f.required("version"));
  if (version != kCaseFileVersion)
    throw std::invalid_argument("unsupported case file version " + std::to_string(version) +
                                " (this flashproof reads version " +
                                std::to_string(kCaseFileVersion) + ")");
  CaseFile cf;
  if (const json::Value* v = f.optional("note")) cf.note = f.string("note", *v);
  if (const json::Value* v = f.optional("property")) cf.property = f.string("property", *v);
  Case& c = cf.c;
  Problem& p = c.problem;
  c.impl = f.string("impl", f.required("impl"));
  const std::string dtype = f.string("dtype", f.required("dtype"));
  const auto t = parse_dtype(dtype);
  if (!t) throw std::invalid_argument("unsupported dtype " + shown(dtype) + " (fp16, bf16, fp32)");
  p.dtype = *t;
  for (auto [key, field] : {std::pair{"batch", &p.batch}, {"heads_q", &p.heads_q},
                            {"heads_kv", &p.heads_kv}, {"seqlen_q", &p.seqlen_q},
                            {"seqlen_k", &p.seqlen_k}, {"head_dim", &p.head_dim},
                            {"window_left", &p.window_left}, {"window_right", &p.window_right}})
    *field = f.integer(key, f.required(key));
  if (const json::Value* v = f.optional("scale"); v && !v->is_null()) {
    const double s = f.number("scale", *v);
    if (std::fabs(s) > std::numeric_limits<float>::max())
      throw std::invalid_argument("\"scale\" must be a finite fp32 number or null");
    p.scale = static_cast<float>(s);
  }
  const std::string dist = f.string("dist", f.required("dist"));
  const auto d = parse_distribution(dist);
  if (!d) {
    std::string names;
    for (const auto& n : distribution_names()) names += (names.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown distribution " + shown(dist) + " (" + names + ")");
  }
  c.dist = *d;
  c.seed = f.unsigned64("seed", f.required("seed"));
  c.backward = f.boolean("backward", f.required("backward"));
  if (const json::Value* v = f.optional("schedule")) c.schedule = f.unsigned64("schedule", *v);

  if (const json::Value* check = f.optional("check")) {
    if (!check->is_object())
      throw std::invalid_argument("\"check\" must be an object");
    Fields g(*check, "check.");
    CheckOptions& o = cf.options;
    reference::Options& ro = o.reference;
    for (auto [key, field] : {std::pair{"k_forward", &o.k_forward}, {"k_backward", &o.k_backward},
                              {"floor_ulps", &o.floor_ulps}, {"lse_floor_ulps", &o.lse_floor_ulps},
                              {"rel_requirement", &ro.rel_requirement},
                              {"abs_requirement", &ro.abs_requirement}})
      if (const json::Value* v = g.optional(key)) {
        *field = g.number(key, *v);
        if (*field < 0) throw std::invalid_argument(g.name(key) + " must be >= 0");
      }
    if (const json::Value* v = g.optional("reference")) {
      const std::string b = g.string("reference", *v);
      const auto* k = std::find_if(std::begin(kBackends), std::end(kBackends),
                                   [&](reference::Backend x) { return b == reference::backend_name(x); });
      if (k == std::end(kBackends))
        throw std::invalid_argument("unknown reference backend " + shown(b) +
                                    " (fast, mpfr, cpp_bin_float)");
      ro.backend = *k;
    }
    if (const json::Value* v = g.optional("precision_bits")) {
      const std::int64_t bits = g.integer("precision_bits", *v);
      if (bits < 0 || bits > std::numeric_limits<unsigned>::max())
        throw std::invalid_argument(g.name("precision_bits") + " is out of range");
      ro.precision_bits = static_cast<unsigned>(bits);  // the reference checks its own range
    }
    if (const json::Value* v = g.optional("relative_to")) {
      const std::string r = g.string("relative_to", *v);
      if (r != "magnitude" && r != "value")
        throw std::invalid_argument(g.name("relative_to") + " must be \"magnitude\" or \"value\"");
      ro.relative_to = r == "value" ? reference::Options::RelativeTo::value
                                    : reference::Options::RelativeTo::magnitude;
    }
    if (const json::Value* v = g.optional("sample")) {
      ro.sample = g.integer("sample", *v);
      if (ro.sample < 0) throw std::invalid_argument(g.name("sample") + " must be >= 0 (0: every row and column)");
    }
    if (const json::Value* v = g.optional("sample_seed")) ro.sample_seed = g.unsigned64("sample_seed", *v);
    g.reject_unknown();
  }
  f.reject_unknown();
  if (const std::string e = p.validate(); !e.empty()) throw std::invalid_argument(e);
  return cf;
}

}  // namespace

json::Value case_json(const Case& c, const CheckOptions& o, const std::string& note,
                      const std::string& property) {
  const Problem& p = c.problem;
  const reference::Options& ro = o.reference;
  json::Value j = json::Value::object();
  j["format"] = kCaseFileFormat;
  j["version"] = kCaseFileVersion;
  j["note"] = note;
  if (!property.empty()) j["property"] = property;
  j["impl"] = c.impl;
  j["dtype"] = dtype_name(p.dtype);
  for (const auto& [name, size] : p.sizes()) j[name] = size;
  j["window_left"] = p.window_left;
  j["window_right"] = p.window_right;
  j["scale"] = p.scale ? json::Value(finite("scale", static_cast<double>(*p.scale))) : json::Value(nullptr);
  j["dist"] = distribution_name(c.dist);
  j["seed"] = std::to_string(c.seed);
  j["backward"] = c.backward;
  if (c.schedule != 0) j["schedule"] = std::to_string(c.schedule);
  j["check"] = {{"k_forward", finite("k_forward", o.k_forward)},
                {"k_backward", finite("k_backward", o.k_backward)},
                {"floor_ulps", finite("floor_ulps", o.floor_ulps)},
                {"lse_floor_ulps", finite("lse_floor_ulps", o.lse_floor_ulps)},
                {"reference", reference::backend_name(ro.backend)},
                {"precision_bits", ro.precision_bits},
                {"rel_requirement", finite("rel_requirement", ro.rel_requirement)},
                {"abs_requirement", finite("abs_requirement", ro.abs_requirement)},
                {"relative_to", relative_to_name(ro.relative_to)},
                {"sample", ro.sample},
                {"sample_seed", std::to_string(ro.sample_seed)}};
  return j;
}

std::string case_to_json(const Case& c, const CheckOptions& o, const std::string& note,
                         const std::string& property) {
  return json::write(case_json(c, o, note, property), json::indented()) + "\n";
}

CaseFile case_from_json(std::string_view text, const std::string& source) {
  try {
    return parse_case(json::parse(text));
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
