#include "harness/records.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
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

// Written with 17 significant digits (reads back as the same double); JSON has no non-finite
// number, and a record that is read back must read as written.
double finite(const char* what, double x) {
  if (!std::isfinite(x)) throw std::invalid_argument(std::string(what) + " is not finite and cannot be saved");
  return x;
}

const reference::Backend kBackends[] = {reference::Backend::fast, reference::Backend::mpfr,
                                        reference::Backend::cpp_bin_float};

const char* relative_to_name(reference::Options::RelativeTo r) {
  return r == reference::Options::RelativeTo::value ? "value" : "magnitude";
}

// A finite number that an fp32 holds without overflow, as fp32 (rounded to nearest).
float fp32_number(Fields& f, const char* key, const json::Value& v) {
  const double x = f.number(key, v);
  if (!(std::fabs(x) <= std::numeric_limits<float>::max()))
    throw std::invalid_argument(f.name(key) + " must be a finite fp32 number");
  return static_cast<float>(x);
}

// The problem's members of an object (a case file's, a problem's own).
void read_problem(Fields& f, Problem& p) {
  const std::string dtype = f.string("dtype", f.required("dtype"));
  const auto t = parse_dtype(dtype);
  if (!t) throw std::invalid_argument("unsupported dtype " + shown(dtype) + " (fp16, bf16, fp32)");
  p.dtype = *t;
  for (auto [key, field] : {std::pair{"batch", &p.batch}, {"heads_q", &p.heads_q},
                            {"heads_kv", &p.heads_kv}, {"seqlen_q", &p.seqlen_q},
                            {"seqlen_k", &p.seqlen_k}, {"head_dim", &p.head_dim},
                            {"window_left", &p.window_left}, {"window_right", &p.window_right}})
    *field = f.integer(key, f.required(key));
  p.scale.reset();
  if (const json::Value* v = f.optional("scale"); v && !v->is_null()) p.scale = fp32_number(f, "scale", *v);
  // A packed batch's offsets: both or neither (Problem::validate says which rule a pair breaks).
  for (auto [key, field] : {std::pair{"cu_seqlens_q", &p.cu_seqlens_q}, {"cu_seqlens_k", &p.cu_seqlens_k},
                            {"cache_seqlens", &p.cache_seqlens}, {"block_table", &p.block_table}}) {
    field->clear();
    const json::Value* v = f.optional(key);
    if (!v) continue;
    if (!v->is_array()) throw std::invalid_argument(f.name(key) + " must be an array of integers");
    for (const json::Value& x : *v) field->push_back(f.integer(key, x));
  }
  // A KV cache's sizes (0 where absent: no pages, the implementation's split count).
  for (auto [key, field] : {std::pair{"page_size", &p.page_size}, {"num_pages", &p.num_pages}, {"num_splits", &p.num_splits},
                            {"seqlen_new", &p.seqlen_new}}) {
    const json::Value* v = f.optional(key);
    *field = v ? f.integer(key, *v) : 0;
  }
  // The score modification: each field only where it is set (Problem::validate judges the values).
  p.softcap.reset();
  if (const json::Value* v = f.optional("softcap"); v && !v->is_null()) p.softcap = fp32_number(f, "softcap", *v);
  p.alibi_slopes.clear();
  if (const json::Value* v = f.optional("alibi_slopes")) {
    if (!v->is_array()) throw std::invalid_argument(f.name("alibi_slopes") + " must be an array of numbers");
    for (const json::Value& x : *v) p.alibi_slopes.push_back(fp32_number(f, "alibi_slopes", x));
  }
}

// "softmax_scale" is derived: where a file gives it, it must be the one its problem implies (a
// hand edit of "scale" or "head_dim" that left it behind is refused, not resolved silently).
void check_softmax_scale(Fields& f, const Problem& p) {
  const json::Value* v = f.optional("softmax_scale");
  if (!v || !p.validate().empty()) return;  // an invalid problem: its own error is reported
  const double given = f.number("softmax_scale", *v);
  const double implied = static_cast<double>(p.softmax_scale());
  if (given != implied)
    throw std::invalid_argument(f.name("softmax_scale") + " (" + json::write(*v) + ") is not the scale that \"scale\" and " +
                                "\"head_dim\" give (" + json::write(json::Value(implied)) + "); correct or remove it");
}

// The case's members; `distribution_key` is "distribution" (version 2) or "dist" (version 1).
void read_case(Fields& f, Case& c, const char* distribution_key) {
  c.impl = f.string("impl", f.required("impl"));
  read_problem(f, c.problem);
  const std::string dist = f.string(distribution_key, f.required(distribution_key));
  const auto d = parse_distribution(dist);
  if (!d) {
    std::string names;
    for (const auto& n : distribution_names()) names += (names.empty() ? "" : ", ") + n;
    throw std::invalid_argument("unknown distribution " + shown(dist) + " (" + names + ")");
  }
  c.dist = *d;
  c.seed = f.unsigned64("seed", f.required("seed"));
  c.backward = f.boolean("backward", f.required("backward"));
  c.schedule = 0;
  if (const json::Value* v = f.optional("schedule")) c.schedule = f.unsigned64("schedule", *v);
}

void read_check_options(Fields& g, CheckOptions& o) {
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
      throw std::invalid_argument("unknown reference backend " + shown(b) + " (fast, mpfr, cpp_bin_float)");
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
    ro.relative_to = r == "value" ? reference::Options::RelativeTo::value : reference::Options::RelativeTo::magnitude;
  }
  if (const json::Value* v = g.optional("sample")) {
    ro.sample = g.integer("sample", *v);
    if (ro.sample < 0) throw std::invalid_argument(g.name("sample") + " must be >= 0 (0: every row and column)");
  }
  if (const json::Value* v = g.optional("sample_seed")) ro.sample_seed = g.unsigned64("sample_seed", *v);
}

const json::Value& object(const json::Value& j, const char* what) {
  if (!j.is_object()) throw std::invalid_argument(std::string(what) + " must be a JSON object");
  return j;
}

json::Value metrics_json(const ErrorMetrics& m) {
  return {{"count", m.count},
          {"max_abs", m.max_abs},
          {"max_rel", m.max_rel},
          {"rel_floor", m.rel_floor},
          {"normwise_rel", m.normwise_rel},
          {"max_ulps", m.max_ulps},
          {"ulps_unknown", m.ulps_unknown},
          {"nan_mismatch", m.nan_mismatch},
          {"inf_mismatch", m.inf_mismatch},
          {"above_tolerance", m.above_bound},
          {"nonfinite_reference", m.nonfinite_reference},
          {"loose_reference", m.loose_reference},
          {"worst_index", json::Value::array({m.worst_coord[0], m.worst_coord[1], m.worst_coord[2], m.worst_coord[3]})},
          {"worst_value", m.worst_value},
          {"worst_reference", m.worst_reference}};
}

// A located element (check.h, ElementReport), null when there is none: its coordinates, the exact
// and returned values and the bounds; with_bound adds the implementation's bound and the ratio.
json::Value element_json(const ElementReport& e, bool with_bound) {
  if (e.index < 0) return nullptr;
  json::Value j = {{"index", e.coord}, {"exact", e.exact}, {"returned", e.returned}};
  if (with_bound) {
    j["bound"] = e.bound;
    j["error_over_bound"] = e.ratio;
  }
  j["reference_bound"] = e.reference_bound;
  return j;
}

}  // namespace

// ---- Problem ----

void to_json(json::Value& j, const Problem& p) {
  j = json::Value::object();
  j["dtype"] = dtype_name(p.dtype);
  for (const auto& [name, size] : p.sizes()) j[name] = size;
  j["window_left"] = p.window_left;
  j["window_right"] = p.window_right;
  j["scale"] = p.scale ? json::Value(finite("scale", static_cast<double>(*p.scale))) : json::Value(nullptr);
  j["softmax_scale"] = finite("softmax_scale", static_cast<double>(p.softmax_scale()));
  if (p.packed()) {  // dense problems keep the fields of files written before packed batches
    j["cu_seqlens_q"] = p.cu_seqlens_q;
    j["cu_seqlens_k"] = p.cu_seqlens_k;
  }
  if (!p.cache_seqlens.empty()) j["cache_seqlens"] = p.cache_seqlens;  // a KV cache: only where set
  if (p.paged()) {
    j["page_size"] = p.page_size;
    j["num_pages"] = p.num_pages;
    j["block_table"] = p.block_table;
  }
  if (p.num_splits != 0) j["num_splits"] = p.num_splits;
  if (p.seqlen_new != 0) j["seqlen_new"] = p.seqlen_new;
  if (p.softcap) j["softcap"] = finite("softcap", static_cast<double>(*p.softcap));
  if (p.alibi()) {
    json::Value slopes = json::Value::array();
    for (float s : p.alibi_slopes) slopes.push_back(finite("alibi_slopes", static_cast<double>(s)));
    j["alibi_slopes"] = slopes;
  }
}

void from_json(const json::Value& j, Problem& p) {
  Fields f(object(j, "a problem"), "");
  read_problem(f, p);
  check_softmax_scale(f, p);
  f.reject_unknown();
}

// ---- Case ----

void to_json(json::Value& j, const Case& c) {
  j = json::Value::object();
  j["impl"] = c.impl;
  j.update(json::Value(c.problem));
  j["distribution"] = distribution_name(c.dist);
  j["seed"] = std::to_string(c.seed);
  j["backward"] = c.backward;
  if (c.schedule != 0) j["schedule"] = std::to_string(c.schedule);
}

void from_json(const json::Value& j, Case& c) {
  Fields f(object(j, "a case"), "");
  read_case(f, c, "distribution");
  check_softmax_scale(f, c.problem);
  f.reject_unknown();
}

// ---- CheckOptions ----

void to_json(json::Value& j, const CheckOptions& o) {
  const reference::Options& ro = o.reference;
  j = {{"k_forward", finite("k_forward", o.k_forward)},
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
}

void from_json(const json::Value& j, CheckOptions& o) {
  Fields g(object(j, "\"check\""), "check.");
  read_check_options(g, o);
  g.reject_unknown();
}

// ---- Case files ----

void to_json(json::Value& j, const CaseFile& f) {
  j = json::Value::object();
  j["format"] = kCaseFileFormat;
  j["version"] = kCaseFileVersion;
  j["note"] = f.note;
  if (!f.property.empty()) j["property"] = f.property;
  j.update(json::Value(f.c));
  j["check"] = json::Value(f.options);
}

void from_json(const json::Value& top, CaseFile& cf) {
  if (!top.is_object()) throw std::invalid_argument("not a flashproof case file (not a JSON object)");
  Fields f(top, "");
  const json::Value* format = f.optional("format");
  if (!format || json::string(*format) != kCaseFileFormat)
    throw std::invalid_argument(std::string("not a flashproof case file (no \"format\": \"") + kCaseFileFormat + "\")");
  const std::int64_t version = f.integer("version", f.required("version"));
  if (version != 1 && version != kCaseFileVersion)
    throw std::invalid_argument("unsupported case file version " + std::to_string(version) +
                                " (this flashproof reads versions 1 and " + std::to_string(kCaseFileVersion) + ")");
  cf = CaseFile{};
  if (const json::Value* v = f.optional("note")) cf.note = f.string("note", *v);
  if (const json::Value* v = f.optional("property")) cf.property = f.string("property", *v);
  read_case(f, cf.c, version == 1 ? "dist" : "distribution");
  if (version != 1) check_softmax_scale(f, cf.c.problem);
  if (const json::Value* check = f.optional("check")) {
    Fields g(object(*check, "\"check\""), "check.");
    read_check_options(g, cf.options);
    g.reject_unknown();
  }
  f.reject_unknown();
  if (const std::string e = cf.c.problem.validate(); !e.empty()) throw std::invalid_argument(e);
}

// ---- The check record ----

void to_json(json::Value& j, const TensorCheck& t) {
  j = json::Value::object();
  j["name"] = t.name;
  j["verdict"] = verdict_name(t.verdict);
  j["tolerance"] = t.tolerance;
  j["d_error_share"] = t.d_error_share;
  j["max_reference_bound"] = t.max_reference_bound;
  j["beyond_range"] = t.beyond_range;
  j["overflow_as_inf"] = t.overflow_as_inf;
  j["finite_beyond_range"] = t.finite_beyond_range;
  j["finite_within_bound"] = t.finite_within_bound;
  j["opposite_inf_within_bound"] = t.opposite_inf_within_bound;
  j["regression_applies"] = t.regression_applies;
  j["baseline_not_finite"] = t.baseline_not_finite;
  j["regression"] = t.regression;
  j["rigorous_bound"] = {{"above", t.above_rigorous_bound},
                         {"unbounded", t.unbounded},
                         {"vacuous", t.vacuous},
                         {"conditional", t.conditional},
                         {"inf_within_bound", t.inf_within_bound},
                         {"inf_within_vacuous_bound", t.inf_within_vacuous_bound},
                         {"max_bound", t.max_rigorous_bound},
                         {"max_error_over_bound", t.bound_ratio},
                         {"worst_element", element_json(t.worst_element, true)}};
  j["not_judged"] = t.unbounded + t.vacuous;
  j["baseline_rule"] = {{"applied", t.baseline_rule.applied},
                        {"vacuous", t.baseline_rule.vacuous},
                        {"tolerance", t.baseline_rule.tolerance},
                        {"dtype_baseline_max_abs", t.baseline_rule.dtype_baseline_max_abs},
                        {"lse_share", t.baseline_rule.lse_share},
                        {"dtype_baseline_not_finite", t.baseline_rule.dtype_baseline_not_finite}};
  j["outside_envelope"] = t.outside_envelope;
  j["first_nan"] = element_json(t.first_nan, false);
  j["first_inf"] = element_json(t.first_inf, false);
  j["reasons"] = t.reasons;
  j["errors"] = metrics_json(t.errors);
  j["baseline_errors"] = metrics_json(t.baseline_errors);
}

void to_json(json::Value& j, const CheckRecord& r) {
  json::Value c = json::Value(r.c);
  c["where"] = r.impl_where;
  json::Value reference = {{"backend", r.reference_backend},
                           {"sampling", r.reference_stats.sampling},
                           {"fallback_rows", r.reference_stats.fallback_rows},
                           {"fallback_columns", r.reference_stats.fallback_columns}};
  if (!r.sampled_rows.empty() || !r.sampled_columns.empty()) {
    reference["sampled_rows"] = r.sampled_rows;
    reference["sampled_columns"] = r.sampled_columns;
  }
  json::Value tensors = json::Value::array();
  for (const TensorCheck& t : r.tensors) tensors.push_back(json::Value(t));

  j = json::Value::object();
  j["case"] = std::move(c);
  j["in_domain"] = r.in_domain;
  j["inputs_in_domain"] = r.inputs_in_domain;
  j["domain_note"] = r.domain_note;
  j["reference"] = std::move(reference);
  j["tensors"] = std::move(tensors);
  j["seconds"] = {{"impl", r.seconds_impl}, {"reference", r.seconds_reference}, {"bounds", r.seconds_bounds}};
  j["regression"] = r.regression;
  j["verdict"] = verdict_name(r.verdict);
}

}  // namespace flashproof
