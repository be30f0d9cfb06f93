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

// ---- A minimal JSON reader: objects (keys unique, order kept), arrays, strings with every
// escape, numbers (kept as their text, so integers convert exactly), true, false, null. ----

struct Json {
  enum class Type { null, boolean, number, string, array, object };
  Type type = Type::null;
  bool boolean = false;
  std::string text;  // a string's value, or a number's literal text
  std::vector<Json> items;
  std::vector<std::pair<std::string, Json>> members;
};

// JSON's two-character escapes: the letter after the backslash and the character it stands for
// ("\/" is read as well, but '/' is written as itself).
constexpr std::pair<char, char> kEscapes[] = {
    {'"', '"'}, {'\\', '\\'}, {'b', '\b'}, {'f', '\f'}, {'n', '\n'}, {'r', '\r'}, {'t', '\t'}};

// Quoted for a one-line message: control characters shown as '?', long strings cut.
std::string shown(std::string_view s) {
  std::string o = "\"";
  for (char ch : s.substr(0, 60)) o += static_cast<unsigned char>(ch) < 0x20 ? '?' : ch;
  return o + (s.size() > 60 ? "...\"" : "\"");
}

class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  Json document() {
    Json v = value();
    space();
    if (i_ < s_.size()) fail("unexpected characters after the top-level value");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 32;
  std::string_view s_;
  std::size_t i_ = 0;
  int depth_ = 0;

  [[noreturn]] void fail(const std::string& what) const {
    std::size_t line = 1, column = 1;
    for (std::size_t k = 0; k < i_ && k < s_.size(); ++k) {
      column = s_[k] == '\n' ? 1 : column + 1;
      line += s_[k] == '\n';
    }
    throw std::invalid_argument("invalid JSON at line " + std::to_string(line) + ", column " +
                                std::to_string(column) + ": " + what);
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek() {
    if (at_end()) fail("unexpected end of file (truncated?)");
    return s_[i_];
  }
  void space() {
    while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\t' || s_[i_] == '\n' || s_[i_] == '\r')) ++i_;
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++i_;
  }

  Json value() {
    space();
    const char c = peek();
    if (c == '{' || c == '[') {
      if (++depth_ > kMaxDepth) fail("nested deeper than " + std::to_string(kMaxDepth) + " levels");
      Json v = c == '{' ? object() : array();
      --depth_;
      return v;
    }
    Json v;
    if (c == '"') {
      v.type = Json::Type::string;
      v.text = string();
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      v.type = Json::Type::number;
      v.text = number();
    } else if (literal("true")) {
      v.type = Json::Type::boolean;
      v.boolean = true;
    } else if (literal("false")) {
      v.type = Json::Type::boolean;
    } else if (!literal("null")) {
      fail("expected a value");
    }
    return v;
  }

  bool literal(std::string_view word) {
    if (s_.substr(i_, word.size()) != word) return false;
    i_ += word.size();
    return true;
  }

  // The elements of a '{...}' or '[...]' list: `element` parses one, the commas are checked here.
  template <class F>
  void elements(char open, char close, F element) {
    expect(open);
    space();
    if (peek() == close) {
      ++i_;
      return;
    }
    while (true) {
      element();
      space();
      if (peek() == close) {
        ++i_;
        return;
      }
      if (peek() != ',') fail(std::string("expected ',' or '") + close + "'");
      ++i_;
    }
  }

  Json object() {
    Json v;
    v.type = Json::Type::object;
    elements('{', '}', [&] {
      space();
      if (peek() != '"') fail("expected a key in double quotes");
      const std::size_t key_at = i_;
      std::string key = string();
      for (const auto& m : v.members)
        if (m.first == key) {
          i_ = key_at;
          fail("duplicate key " + shown(key));
        }
      space();
      expect(':');
      v.members.emplace_back(std::move(key), value());
    });
    return v;
  }

  Json array() {
    Json v;
    v.type = Json::Type::array;
    elements('[', ']', [&] { v.items.push_back(value()); });
    return v;
  }

  std::string number() {
    const std::size_t start = i_;
    auto digits = [&] {
      const std::size_t from = i_;
      while (!at_end() && s_[i_] >= '0' && s_[i_] <= '9') ++i_;
      if (i_ == from) fail("malformed number");
    };
    if (s_[i_] == '-') ++i_;
    if (!at_end() && s_[i_] == '0') ++i_;
    else digits();
    if (!at_end() && s_[i_] == '.') {
      ++i_;
      digits();
    }
    if (!at_end() && (s_[i_] == 'e' || s_[i_] == 'E')) {
      ++i_;
      if (!at_end() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
      digits();
    }
    return std::string(s_.substr(start, i_ - start));
  }

  unsigned hex4() {
    unsigned u = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = peek();
      ++i_;
      u <<= 4;
      if (h >= '0' && h <= '9') u |= h - '0';
      else if (h >= 'a' && h <= 'f') u |= h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') u |= h - 'A' + 10;
      else fail("malformed \\u escape");
    }
    return u;
  }

  static void append_utf8(std::string& o, unsigned cp) {
    if (cp < 0x80) {
      o += static_cast<char>(cp);
    } else if (cp < 0x800) {
      o += static_cast<char>(0xC0 | (cp >> 6));
      o += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      o += static_cast<char>(0xE0 | (cp >> 12));
      o += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      o += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      o += static_cast<char>(0xF0 | (cp >> 18));
      o += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      o += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      o += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  std::string string() {
    expect('"');
    std::string o;
    while (true) {
      const char c = peek();
      ++i_;
      if (c == '"') return o;
      if (static_cast<unsigned char>(c) < 0x20) {
        --i_;
        fail("control character in a string (write it as an escape)");
      }
      if (c != '\\') {
        o += c;
        continue;
      }
      const char e = peek();
      ++i_;
      const auto* simple = std::find_if(std::begin(kEscapes), std::end(kEscapes),
                                        [e](const auto& x) { return x.first == e; });
      if (simple != std::end(kEscapes)) {
        o += simple->second;
        continue;
      }
      switch (e) {
        case '/': o += '/'; break;
        case 'u': {
          unsigned cp = hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) fail("lone low surrogate in a \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (!literal("\\u")) fail("high surrogate not followed by a low one");
            const unsigned low = hex4();
            if (low < 0xDC00 || low > 0xDFFF) fail("high surrogate not followed by a low one");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(o, cp);
          break;
        }
        default: {
          --i_;
          const auto u = static_cast<unsigned char>(e);
          char what[48];
          if (u >= 0x20 && u < 0x7f) std::snprintf(what, sizeof what, "unknown escape \\%c", e);
          else std::snprintf(what, sizeof what, "unknown escape: \\ before byte 0x%02x", u);
          fail(what);
        }
      }
    }
  }
};

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

std::string json_quote(std::string_view s) {
  std::string o = "\"";
  for (char ch : s) {
    const auto* simple = std::find_if(std::begin(kEscapes), std::end(kEscapes),
                                      [ch](const auto& x) { return x.second == ch; });
    if (simple != std::end(kEscapes)) {
      o += '\\';
      o += simple->first;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(ch));
      o += buf;
    } else {
      o += ch;
    }
  }
  return o + "\"";
}

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
    if (const Json* v = g.optional("sample")) ro.sample = g.integer("sample", *v);
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
    << "  \"backward\": " << (c.backward ? "true" : "false") << ",\n"
    << "  \"check\": {\n"
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
    return parse_case(Parser(text).document());
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
