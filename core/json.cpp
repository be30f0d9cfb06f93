#include "core/json.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <type_traits>
#include <unordered_set>

namespace flashproof {

namespace {

// JSON's two-character escapes: the letter after the backslash and the character it stands for
// ("\/" is read as well, but '/' is written as itself).
constexpr std::pair<char, char> kEscapes[] = {
    {'"', '"'}, {'\\', '\\'}, {'b', '\b'}, {'f', '\f'}, {'n', '\n'}, {'r', '\r'}, {'t', '\t'}};

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

// Quoted for a one-line message: control characters shown as '?', long strings cut.
std::string shown(std::string_view s) {
  std::string o = "\"";
  for (char ch : s.substr(0, 60)) o += static_cast<unsigned char>(ch) < 0x20 ? '?' : ch;
  return o + (s.size() > 60 ? "...\"" : "\"");
}

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

}  // namespace flashproof

// ==== namespace json: nlohmann::ordered_json values, one reader, one writer ====

namespace flashproof::json {

Layout::Layout() = default;
Layout::~Layout() = default;
Layout::Layout(const Layout&) = default;
Layout::Layout(Layout&&) noexcept = default;
Layout& Layout::operator=(const Layout&) = default;
Layout& Layout::operator=(Layout&&) noexcept = default;

namespace {

constexpr int kMaxDepth = 32;

// The byte offset where the reader is, for the messages: an iterator over the text that records
// how far nlohmann's reader has consumed it (the SAX calls do not carry a position).
class TrackedChar {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  TrackedChar(const char* at, std::size_t* consumed, const char* begin)
      : at_(at), consumed_(consumed), begin_(begin) {}
  reference operator*() const { return *at_; }
  TrackedChar& operator++() {
    *consumed_ = static_cast<std::size_t>(++at_ - begin_);
    return *this;
  }
  TrackedChar operator++(int) {
    TrackedChar old = *this;
    ++*this;
    return old;
  }
  bool operator==(const TrackedChar& o) const { return at_ == o.at_; }
  bool operator!=(const TrackedChar& o) const { return at_ != o.at_; }

 private:
  const char* at_;
  std::size_t* consumed_;
  const char* begin_;
};

// nlohmann's reader's message (after "... - ") in the project's words, which tests and users know.
std::string reader_message(std::string_view text, std::size_t at, const std::string& what) {
  const auto has = [&](std::string_view part) { return what.find(part) != std::string::npos; };
  if (at >= text.size()) return "unexpected end of file (truncated?)";
  if (has("; expected end of input")) return "unexpected characters after the top-level value";
  if (has("forbidden character after backslash")) {
    const auto u = static_cast<unsigned char>(text[at]);
    char buf[48];
    if (u >= 0x20 && u < 0x7f) std::snprintf(buf, sizeof buf, "unknown escape \\%c", text[at]);
    else std::snprintf(buf, sizeof buf, "unknown escape: \\ before byte 0x%02x", u);
    return buf;
  }
  if (has("control character")) return "control character in a string (write it as an escape)";
  if (has("must be followed by U+DC00")) return "high surrogate not followed by a low one";
  if (has("must follow U+D800")) return "lone low surrogate in a \\u escape";
  if (has("must be followed by 4 hex digits")) return "malformed \\u escape";
  if (has("ill-formed UTF-8")) return "a byte in a string that is not UTF-8";
  if (has("invalid number")) return "malformed number";
  if (has("number overflow")) return "number beyond the range of a double";
  if (has("invalid literal") || has("invalid BOM")) return "expected a value";
  // After a member or item, a comma was as welcome as the closing bracket nlohmann names.
  if (has("; expected '}'")) return "expected ',' or '}'";
  if (has("; expected ']'")) return "expected ',' or ']'";
  const std::size_t dash = what.find(" - ");
  return dash == std::string::npos ? what : what.substr(dash + 3);
}

// Builds the document from nlohmann's SAX events, enforcing what its own DOM builder does not:
// unique keys (a hash set per open object, so a large object is not quadratic) and the depth limit.
class DomBuilder {
 public:
  using number_integer_t = Value::number_integer_t;
  using number_unsigned_t = Value::number_unsigned_t;
  using number_float_t = Value::number_float_t;
  using string_t = Value::string_t;
  using binary_t = Value::binary_t;

  DomBuilder(std::string_view text, const std::size_t& consumed) : text_(text), consumed_(consumed) {}

  Value& root() { return root_; }
  // The error found, with the byte offset it is at; empty when none.
  const std::string& error() const { return error_; }
  std::size_t error_at() const { return error_at_; }

  bool null() { return add(Value(nullptr)); }
  bool boolean(bool b) { return add(Value(b)); }
  bool number_integer(number_integer_t x) { return x == 0 && minus_zero() ? add(Value(-0.0)) : add(Value(x)); }
  bool number_unsigned(number_unsigned_t x) { return add(Value(x)); }
  bool number_float(number_float_t x, const string_t&) { return add(Value(x)); }
  bool string(string_t& s) { return add(Value(std::move(s))); }
  bool binary(binary_t&) { return fail(consumed_, "binary values are not JSON"); }

  bool start_object(std::size_t) { return open(Value::object()); }
  bool start_array(std::size_t) { return open(Value::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }

  bool key(string_t& k) {
    if (!keys_.back().insert(k).second) return fail(key_start(), "duplicate key " + shown(k));
    key_ = std::move(k);
    return true;
  }

  bool parse_error(std::size_t position, const std::string& token, const nlohmann::detail::exception& e) {
    // position counts the characters read, the one the reader stopped at included.
    std::size_t at = std::min(position > 0 ? position - 1 : 0, text_.size());
    const std::string what = reader_message(text_, at, e.what());
    // A whole token that does not belong there: point at its start (token is its text as read,
    // unless it holds a control character, which nlohmann shows as <U+XXXX>).
    if (std::string_view(e.what()).find("- unexpected ") != std::string_view::npos && at < text_.size() &&
        token.find("<U+") == std::string::npos && token.find_first_of(" \t\r\n") == std::string::npos &&
        !token.empty() && token.size() <= at + 1 && text_.compare(at + 1 - token.size(), token.size(), token) == 0)
      at = at + 1 - token.size();
    return fail(at, what);
  }

 private:
  bool fail(std::size_t at, std::string what) {
    error_ = std::move(what);
    error_at_ = at;
    return false;
  }

  // Whether the integer 0 just read was written "-0". The reader has consumed the character after
  // the number (unless the text ends with it), so the number ends at consumed - 1 or at the end.
  bool minus_zero() const {
    const std::size_t end = consumed_ >= text_.size() && !text_.empty() && text_.back() == '0' ? text_.size()
                                                                                              : consumed_ - 1;
    return end >= 2 && end <= text_.size() && text_[end - 1] == '0' && text_[end - 2] == '-';
  }

  // The opening quote of the key just read: the reader has consumed the text up to its closing
  // quote, and a quote inside the key is preceded by an odd number of backslashes.
  std::size_t key_start() const {
    std::size_t i = consumed_ >= 2 ? consumed_ - 2 : 0;
    while (i > 0) {
      if (text_[i] == '"') {
        std::size_t backslashes = 0;
        while (backslashes < i && text_[i - 1 - backslashes] == '\\') ++backslashes;
        if (backslashes % 2 == 0) return i;
      }
      --i;
    }
    return i;
  }

  // Places v in the open container (or as the root); returns where it now lives.
  Value* place(Value&& v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Value& c = *open_.back();
    if (c.is_array()) {
      c.get_ref<Value::array_t&>().push_back(std::move(v));
      return &c.get_ref<Value::array_t&>().back();
    }
    // Appended without ordered_map's linear search for the key: key() checked it is new.
    auto& members = c.get_ref<Value::object_t&>();
    members.emplace_back(std::move(key_), std::move(v));
    return &members.back().second;
  }
  bool add(Value&& v) {
    place(std::move(v));
    return true;
  }
  bool open(Value&& container) {
    if (open_.size() >= static_cast<std::size_t>(kMaxDepth))
      return fail(consumed_ > 0 ? consumed_ - 1 : 0, "nested deeper than " + std::to_string(kMaxDepth) + " levels");
    const bool is_object = container.is_object();
    open_.push_back(place(std::move(container)));
    if (is_object) keys_.emplace_back();
    return true;
  }
  bool close() {
    if (open_.back()->is_object()) keys_.pop_back();
    open_.pop_back();
    return true;
  }

  std::string_view text_;
  const std::size_t& consumed_;
  Value root_;
  std::vector<Value*> open_;
  std::vector<std::unordered_set<std::string>> keys_;
  std::string key_;
  std::string error_;
  std::size_t error_at_ = 0;
};

}  // namespace

Value parse(std::string_view text, const std::string& source) {
  try {
    return parse(text);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(source + ": " + e.what());
  }
}

Value parse(std::string_view text) {
  std::size_t consumed = 0;
  DomBuilder builder(text, consumed);
  const char* begin = text.data();
  const bool ok = Value::sax_parse(TrackedChar(begin, &consumed, begin),
                                   TrackedChar(begin + text.size(), &consumed, begin), &builder);
  if (!ok) {
    const std::size_t at = std::min(builder.error_at(), text.size());
    std::size_t line = 1, column = 1;
    for (std::size_t k = 0; k < at; ++k) {
      column = text[k] == '\n' ? 1 : column + 1;
      line += text[k] == '\n';
    }
    throw std::invalid_argument("invalid JSON at line " + std::to_string(line) + ", column " +
                                std::to_string(column) + ": " +
                                (builder.error().empty() ? "malformed" : builder.error()));
  }
  return std::move(builder.root());
}

Layout one_line(Digits digits) {
  Layout l;
  l.digits = digits;
  return l;
}

Layout indented(Digits digits) {
  Layout l = one_line(digits);
  l.indented = true;
  return l;
}

Layout top_lines(Digits digits) {
  Layout l = indented(digits);
  l.inner = {{"*", one_line(digits)}};
  return l;
}

Layout unbroken(Layout layout) {
  layout.unbroken = true;
  return layout;
}

namespace {

// The length of the well-formed UTF-8 sequence at s[i] (1 for ASCII); 0 when there is none.
std::size_t utf8_length(std::string_view s, std::size_t i) {
  const auto byte = [&](std::size_t k) { return static_cast<unsigned char>(s[k]); };
  const unsigned lead = byte(i);
  if (lead < 0x80) return 1;
  const std::size_t n = lead >= 0xC2 && lead <= 0xDF ? 2 : lead >= 0xE0 && lead <= 0xEF ? 3 : lead >= 0xF0 && lead <= 0xF4 ? 4 : 0;
  if (n == 0 || i + n > s.size()) return 0;
  for (std::size_t k = 1; k < n; ++k)
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
  // No overlong 3- and 4-byte forms, no surrogates, nothing above U+10FFFF.
  const unsigned second = byte(i + 1);
  if ((lead == 0xE0 && second < 0xA0) || (lead == 0xED && second > 0x9F) ||
      (lead == 0xF0 && second < 0x90) || (lead == 0xF4 && second > 0x8F))
    return 0;
  return n;
}

void append_string(std::string& o, std::string_view s) {
  o += '"';
  for (std::size_t i = 0; i < s.size();) {
    const char ch = s[i];
    const auto* simple = std::find_if(std::begin(kEscapes), std::end(kEscapes),
                                      [ch](const auto& x) { return x.second == ch; });
    if (simple != std::end(kEscapes)) {
      o += '\\';
      o += simple->first;
      ++i;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(ch));
      o += buf;
      ++i;
    } else if (const std::size_t n = utf8_length(s, i); n > 0) {
      o.append(s.substr(i, n));
      i += n;
    } else {
      o += "\xEF\xBF\xBD";  // U+FFFD, the replacement character
      ++i;
    }
  }
  o += '"';
}

void append_double(std::string& o, double x, Digits digits) {
  if (std::isnan(x)) {
    o += "\"nan\"";
    return;
  }
  if (std::isinf(x)) {
    o += x > 0 ? "\"inf\"" : "\"-inf\"";
    return;
  }
  char buf[40];
  if (digits == Digits::shortest) {
    o.append(buf, std::to_chars(buf, buf + sizeof buf, x).ptr);
    return;
  }
  std::snprintf(buf, sizeof buf, digits == Digits::g9 ? "%.9g" : digits == Digits::g6 ? "%g" : "%.17g", x);
  o += buf;
}

// The layout of the value of member `key` (or of an item, key empty) of a container in layout l.
Layout inner_layout(const Layout& l, std::string_view key) {
  const Layout* rule = nullptr;
  for (const auto& [k, inner] : l.inner)
    if (k == key && !key.empty()) rule = &inner;
  if (rule == nullptr)
    for (const auto& [k, inner] : l.inner)
      if (k == "*") rule = &inner;
  Layout child;
  if (rule != nullptr) {
    child = *rule;
  } else {
    child.indented = l.indented;
    child.digits = l.digits;
  }
  child.unbroken = child.unbroken || l.unbroken;
  return child;
}

void append_value(std::string& o, const Value& v, const Layout& l, int depth) {
  switch (v.type()) {
    case Value::value_t::null: o += "null"; return;
    case Value::value_t::boolean: o += v.get<bool>() ? "true" : "false"; return;
    case Value::value_t::number_integer: o += std::to_string(v.get<std::int64_t>()); return;
    case Value::value_t::number_unsigned: o += std::to_string(v.get<std::uint64_t>()); return;
    case Value::value_t::number_float: append_double(o, v.get<double>(), l.digits); return;
    case Value::value_t::string: append_string(o, v.get_ref<const std::string&>()); return;
    case Value::value_t::binary:
    case Value::value_t::discarded: throw std::invalid_argument("a binary or discarded value has no JSON text");
    case Value::value_t::array:
    case Value::value_t::object: break;
  }
  const bool is_object = v.is_object();
  const auto line_break = [&](int spaces) {
    if (!l.unbroken) o.append(1, '\n').append(static_cast<std::size_t>(spaces), ' ');
  };
  const auto named = [](const auto& list, std::string_view key) {
    return std::find_if(list.begin(), list.end(), [&](const auto& x) {
      if constexpr (std::is_same_v<std::decay_t<decltype(x)>, std::string>) return x == key;
      else return x.first == key;
    });
  };
  o += is_object ? '{' : '[';
  std::size_t k = 0;
  const auto member = [&](std::string_view key, const Value& value) {
    if (k > 0) o += ',';
    if (l.indented && (k == 0 || named(l.same_line, key) == l.same_line.end())) {
      line_break(2 * (depth + 1));
    } else if (const auto nl = named(l.new_line, key); !l.indented && k > 0 && nl != l.new_line.end()) {
      line_break(nl->second);
    } else if (k > 0) {
      o += ' ';
    }
    if (is_object) {
      append_string(o, key);
      o += ": ";
    }
    append_value(o, value, inner_layout(l, key), depth + 1);
    ++k;
  };
  if (is_object)
    for (const auto& [key, value] : v.get_ref<const Value::object_t&>()) member(key, value);
  else
    for (const Value& item : v) member({}, item);
  if (k > 0 && l.indented) line_break(2 * depth);
  o += is_object ? '}' : ']';
}

}  // namespace

std::string write(const Value& v, const Layout& layout) {
  std::string o;
  append_value(o, v, layout, 0);
  return o;
}

const Value* find(const Value& v, std::string_view key) {
  if (!v.is_object()) return nullptr;
  for (const auto& [k, value] : v.get_ref<const Value::object_t&>())
    if (k == key) return &value;
  return nullptr;
}

std::optional<double> number(const Value& v) {
  if (!v.is_number()) return std::nullopt;
  return v.get<double>();
}

std::optional<double> record_number(const Value& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  if (s == "inf") return std::numeric_limits<double>::infinity();
  if (s == "-inf") return -std::numeric_limits<double>::infinity();
  if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
  return std::nullopt;
}

std::optional<std::int64_t> integer(const Value& v) {
  if (v.is_number_integer() && !v.is_number_unsigned()) return v.get<std::int64_t>();
  if (v.is_number_unsigned() && v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
    return static_cast<std::int64_t>(v.get<std::uint64_t>());
  return std::nullopt;
}

std::optional<std::uint64_t> unsigned64(const Value& v) {
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer()) {
    const auto x = v.get<std::int64_t>();
    if (x >= 0) return static_cast<std::uint64_t>(x);
    return std::nullopt;
  }
  if (!v.is_string()) return std::nullopt;
  const std::string& s = v.get_ref<const std::string&>();
  std::uint64_t x = 0;
  if (s.empty() || !std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), x);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return x;
}

std::optional<std::string> string(const Value& v) {
  if (!v.is_string()) return std::nullopt;
  return v.get<std::string>();
}

}  // namespace flashproof::json
