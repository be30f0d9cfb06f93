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
  Fields(const Json& object, std::string prefix) : o_(object), prefix_(std::move(prefix)) {
    used_.assign(o_.members.size(), false);
  }
  std::string name(std::string_view key) const { return "\"" + prefix_ + std::string(key) + "\""; }

  const Json* optional(std::string_view key) {
    for (std::size_t k = 0; k < o_.members.size(); ++k)
      if (o_.members[k].first == key) {
        used_[k] = true;
        return &o_.members[k].second;
      }
    return nullptr;
  }
  const Json& required(std::string_view key) {
    if (const Json* v = optional(key)) return *v;
    throw std::invalid_argument("missing field " + name(key));
  }
  // Unknown fields are rejected (a misspelt optional field would otherwise be ignored silently).
  void reject_unknown() const {
    for (std::size_t k = 0; k < o_.members.size(); ++k)
      if (!used_[k])
        throw std::invalid_argument("unknown field \"" + prefix_ + shown(o_.members[k].first).substr(1));
  }

  std::string string(std::string_view key, const Json& v) const {
    if (v.type != Json::Type::string) throw std::invalid_argument(name(key) + " must be a string");
    return v.text;
  }
  bool boolean(std::string_view key, const Json& v) const {
    if (v.type != Json::Type::boolean) throw std::invalid_argument(name(key) + " must be true or false");
    return v.boolean;
  }
  std::int64_t integer(std::string_view key, const Json& v) const {
    std::int64_t x = 0;
    if (v.type != Json::Type::number || !whole(v.text, x))
      throw std::invalid_argument(name(key) + " must be an integer");
    return x;
  }
  // A decimal string (how case_to_json writes it) or a plain integer.
  std::uint64_t unsigned64(std::string_view key, const Json& v) const {
    std::uint64_t x = 0;
    if ((v.type != Json::Type::number && v.type != Json::Type::string) || !whole(v.text, x))
      throw std::invalid_argument(name(key) +
                                  " must be an unsigned 64-bit integer (a decimal string, e.g. \"42\")");
    return x;
  }
  double number(std::string_view key, const Json& v) const {
    double x = 0;
    if (v.type == Json::Type::number) {
      const auto [end, ec] = std::from_chars(v.text.data(), v.text.data() + v.text.size(), x);
      if (ec == std::errc() && end == v.text.data() + v.text.size() && std::isfinite(x)) return x;
    }
    throw std::invalid_argument(name(key) + " must be a finite number");
  }

 private:
  template <class T>
  static bool whole(const std::string& text, T& x) {
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
    return !text.empty() && ec == std::errc() && end == text.data() + text.size();
  }
  const Json& o_;
  std::string prefix_;
  std::vector<bool> used_;
};

// ---- Writing ----

}  // namespace


namespace {

// 17 significant digits: reads back as the same double.
std::string number17(const char* what, double x) {
  if (!std::isfinite(x))
    throw std::invalid_argument(std::string("case file: ") + what + " is not finite and cannot be saved");
  char buf[40];
  const auto r = std::to_chars(buf, buf + sizeof buf, x, std::chars_format::general, 17);
  return std::string(buf, r.ptr);
}

const reference::Backend kBackends[] = {reference::Backend::fast, reference::Backend::mpfr,
                                        reference::Backend::cpp_bin_float};

const char* relative_to_name(reference::Options::RelativeTo r) {
  return r == reference::Options::RelativeTo::value ? "value" : "magnitude";
}

CaseFile parse_case(const Json& top) {
  if (top.type != Json::Type::object)
    throw std::invalid_argument("not a flashproof case file (not a JSON object)");
  Fields f(top, "");
  const Json* format = f.optional("format");
  if (!format || format->type != Json::Type::string || format->text != kCaseFileFormat)
    throw std::invalid_argument(std::string("not a flashproof case file (no \"format\": \"") +
                                kCaseFileFormat + "\")");
  const std::int64_t version = f.integer("version", f.required("version"));
  if (version != kCaseFileVersion)
    throw std::invalid_argument("unsupported case file version " + std::to_string(version) +
                                " (this flashproof reads version " +
                                std::to_string(kCaseFileVersion) + ")");
  CaseFile cf;
  if (const Json* v = f.optional("note")) cf.note = f.string("note", *v);
  if (const Json* v = f.optional("property")) cf.property = f.string("property", *v);
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
  if (const Json* v = f.optional("scale"); v && v->type != Json::Type::null) {
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
  if (const Json* v = f.optional("schedule")) c.schedule = f.unsigned64("schedule", *v);

  if (const Json* check = f.optional("check")) {
    if (check->type != Json::Type::object)
      throw std::invalid_argument("\"check\" must be an object");
    Fields g(*check, "check.");
    CheckOptions& o = cf.options;
    reference::Options& ro = o.reference;
    for (auto [key, field] : {std::pair{"k_forward", &o.k_forward}, {"k_backward", &o.k_backward},
                              {"floor_ulps", &o.floor_ulps}, {"lse_floor_ulps", &o.lse_floor_ulps},
                              {"rel_requirement", &ro.rel_requirement},
                              {"abs_requirement", &ro.abs_requirement}})
      if (const Json* v = g.optional(key)) {
        *field = g.number(key, *v);
        if (*field < 0) throw std::invalid_argument(g.name(key) + " must be >= 0");
      }
    if (const Json* v = g.optional("reference")) {
      const std::string b = g.string("reference", *v);
      const auto* k = std::find_if(std::begin(kBackends), std::end(kBackends),
                                   [&](reference::Backend x) { return b == reference::backend_name(x); });
      if (k == std::end(kBackends))
        throw std::invalid_argument("unknown reference backend " + shown(b) +
                                    " (fast, mpfr, cpp_bin_float)");
      ro.backend = *k;
    }
    if (const Json* v = g.optional("precision_bits")) {
      const std::int64_t bits = g.integer("precision_bits", *v);
      if (bits < 0 || bits > std::numeric_limits<unsigned>::max())
        throw std::invalid_argument(g.name("precision_bits") + " is out of range");
      ro.precision_bits = static_cast<unsigned>(bits);  // the reference checks its own range
    }
    if (const Json* v = g.optional("relative_to")) {
      const std::string r = g.string("relative_to", *v);
      if (r != "magnitude" && r != "value")
        throw std::invalid_argument(g.name("relative_to") + " must be \"magnitude\" or \"value\"");
      ro.relative_to = r == "value" ? reference::Options::RelativeTo::value
                                    : reference::Options::RelativeTo::magnitude;
    }
    if (const Json* v = g.optional("sample")) {
      ro.sample = g.integer("sample", *v);
      if (ro.sample < 0) throw std::invalid_argument(g.name("sample") + " must be >= 0 (0: every row and column)");
    }
    if (const Json* v = g.optional("sample_seed")) ro.sample_seed = g.unsigned64("sample_seed", *v);
    g.reject_unknown();
  }
  f.reject_unknown();
  if (const std::string e = p.validate(); !e.empty()) throw std::invalid_argument(e);
  return cf;
}

}  // namespace

std::string case_to_json(const Case& c, const CheckOptions& o, const std::string& note,
                         const std::string& property) {
  const Problem& p = c.problem;
  const reference::Options& ro = o.reference;
  std::ostringstream s;
  s << "{\n"
    << "  \"format\": " << json_quote(kCaseFileFormat) << ",\n"
    << "  \"version\": " << kCaseFileVersion << ",\n"
    << "  \"note\": " << json_quote(note) << ",\n"
    << (property.empty() ? std::string() : "  \"property\": " + json_quote(property) + ",\n")
    << "  \"impl\": " << json_quote(c.impl) << ",\n"
    << "  \"dtype\": " << json_quote(dtype_name(p.dtype)) << ",\n"
    << "  \"batch\": " << p.batch << ",\n"
    << "  \"heads_q\": " << p.heads_q << ",\n"
    << "  \"heads_kv\": " << p.heads_kv << ",\n"
    << "  \"seqlen_q\": " << p.seqlen_q << ",\n"
    << "  \"seqlen_k\": " << p.seqlen_k << ",\n"
    << "  \"head_dim\": " << p.head_dim << ",\n"
    << "  \"window_left\": " << p.window_left << ",\n"
    << "  \"window_right\": " << p.window_right << ",\n"
    << "  \"scale\": " << (p.scale ? number17("scale", *p.scale) : "null") << ",\n"
    << "  \"dist\": " << json_quote(distribution_name(c.dist)) << ",\n"
    << "  \"seed\": \"" << c.seed << "\",\n"
    << "  \"backward\": " << (c.backward ? "true" : "false") << ",\n";
  if (c.schedule != 0) s << "  \"schedule\": \"" << c.schedule << "\",\n";
  s << "  \"check\": {\n"
    << "    \"k_forward\": " << number17("k_forward", o.k_forward) << ",\n"
    << "    \"k_backward\": " << number17("k_backward", o.k_backward) << ",\n"
    << "    \"floor_ulps\": " << number17("floor_ulps", o.floor_ulps) << ",\n"
    << "    \"lse_floor_ulps\": " << number17("lse_floor_ulps", o.lse_floor_ulps) << ",\n"
    << "    \"reference\": " << json_quote(reference::backend_name(ro.backend)) << ",\n"
    << "    \"precision_bits\": " << ro.precision_bits << ",\n"
    << "    \"rel_requirement\": " << number17("rel_requirement", ro.rel_requirement) << ",\n"
    << "    \"abs_requirement\": " << number17("abs_requirement", ro.abs_requirement) << ",\n"
    << "    \"relative_to\": " << json_quote(relative_to_name(ro.relative_to)) << ",\n"
    << "    \"sample\": " << ro.sample << ",\n"
    << "    \"sample_seed\": \"" << ro.sample_seed << "\"\n"
    << "  }\n"
    << "}\n";
  return s.str();
}

CaseFile case_from_json(std::string_view text, const std::string& source) {
  try {
    return parse_case(parse_json(text));
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
