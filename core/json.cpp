#include "core/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <unordered_set>

namespace flashproof {

Json::Json() = default;
Json::~Json() = default;
Json::Json(const Json&) = default;
Json::Json(Json&&) noexcept = default;
Json& Json::operator=(const Json&) = default;
Json& Json::operator=(Json&&) noexcept = default;

namespace {

// JSON's two-character escapes: the letter after the backslash and the character it stands for
// ("\/" is read as well, but '/' is written as itself).
constexpr std::pair<char, char> kEscapes[] = {
    {'"', '"'}, {'\\', '\\'}, {'b', '\b'}, {'f', '\f'}, {'n', '\n'}, {'r', '\r'}, {'t', '\t'}};

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
    std::unordered_set<std::string> keys;  // a hash set: a linear search per key made large objects quadratic
    elements('{', '}', [&] {
      space();
      if (peek() != '"') fail("expected a key in double quotes");
      const std::size_t key_at = i_;
      std::string key = string();
      if (!keys.insert(key).second) {
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

}  // namespace

const Json* Json::find(std::string_view key) const {
  if (type != Type::object) return nullptr;
  for (const auto& [k, v] : members)
    if (k == key) return &v;
  return nullptr;
}

double Json::number() const {
  double x = std::numeric_limits<double>::quiet_NaN();
  if (type != Type::number) return x;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  return ec == std::errc() && end == text.data() + text.size() ? x : std::numeric_limits<double>::quiet_NaN();
}

long long Json::integer(long long fallback) const {
  if (type != Type::number && type != Type::string) return fallback;
  long long x = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size() ? x : fallback;
}

Json parse_json(std::string_view text) { return Parser(text).document(); }

// Quoted for a one-line message: control characters shown as '?', long strings cut.
std::string shown(std::string_view s) {
  std::string o = "\"";
  for (char ch : s.substr(0, 60)) o += static_cast<unsigned char>(ch) < 0x20 ? '?' : ch;
  return o + (s.size() > 60 ? "...\"" : "\"");
}

namespace {

// The length of the well-formed UTF-8 sequence at s[i] that is not a C1 control (U+0080..U+009F,
// which terminals may obey like ESC); 0 when there is none.
std::size_t printable_utf8_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned lead = byte(i);
  const std::size_t n = lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  return lead == 0xC2 && byte(i + 1) < 0xA0 ? 0 : n;
}

}  // namespace

std::string printable(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto ch = static_cast<unsigned char>(s[i]);
    if (ch >= 0x20 && ch < 0x7f) {
      o += s[i++];
    } else if (const std::size_t n = ch >= 0x80 ? printable_utf8_length(s, i) : 0; n > 0) {
      o.append(s.substr(i, n)), i += n;
    } else {
      const auto* simple = std::find_if(std::begin(kEscapes), std::end(kEscapes),
                                        [&](const auto& x) { return x.second == s[i]; });
      char buf[8];
      if (simple != std::end(kEscapes)) std::snprintf(buf, sizeof buf, "\\%c", simple->first);
      else std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(ch));
      o += buf, ++i;
    }
  }
  return o;
}

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

void append_json(std::string& o, const Json& v, bool one_line, int depth) {
  switch (v.type) {
    case Json::Type::null: o += "null"; return;
    case Json::Type::boolean: o += v.boolean ? "true" : "false"; return;
    case Json::Type::number: o += v.text; return;
    case Json::Type::string: o += json_quote(v.text); return;
    case Json::Type::array:
    case Json::Type::object: break;
  }
  const bool is_object = v.type == Json::Type::object;
  const std::size_t count = is_object ? v.members.size() : v.items.size();
  o += is_object ? '{' : '[';
  // What precedes each member or item: nothing, or a new line indented one level deeper.
  std::string inner;
  if (!one_line) inner.append(1, '\n').append(2 * (depth + 1), ' ');
  for (std::size_t k = 0; k < count; ++k) {
    if (k > 0) o += one_line ? ", " : ",";
    o += inner;
    if (is_object) {
      o += json_quote(v.members[k].first) + ": ";
      append_json(o, v.members[k].second, one_line, depth + 1);
    } else {
      append_json(o, v.items[k], one_line, depth + 1);
    }
  }
  if (count > 0 && !one_line) o.append(1, '\n').append(2 * depth, ' ');
  o += is_object ? '}' : ']';
}

}  // namespace

std::string to_json_text(const Json& v, bool one_line) {
  std::string o;
  append_json(o, v, one_line, 0);
  return o;
}

std::string json_number(double x) {
  if (std::isnan(x)) return "\"nan\"";
  if (std::isinf(x)) return x > 0 ? "\"inf\"" : "\"-inf\"";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", x);
  return buf;
}

}  // namespace flashproof
