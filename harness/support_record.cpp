#include "harness/support_record.h"

#include <stdexcept>
#include <string>

namespace flashproof {
namespace {

[[noreturn]] void bad(const std::string& what) { throw std::invalid_argument("support: " + what); }

std::int64_t whole(const json::Value& v, const std::string& key, std::int64_t low) {
  if (!v.is_number_integer() || v.get<std::int64_t>() < low)
    bad("\"" + key + "\" must be an integer of at least " + std::to_string(low));
  return v.get<std::int64_t>();
}

bool flag(const json::Value& v, const std::string& key) {
  if (!v.is_boolean()) bad("\"" + key + "\" must be true or false");
  return v.get<bool>();
}

const json::Value& list(const json::Value& v, const std::string& key) {
  if (!v.is_array()) bad("\"" + key + "\" must be a list");
  return v;
}

}  // namespace

void to_json(json::Value& j, const Support& s) {
  j = json::Value::object();
  if (!s.dtypes.empty()) {
    j["dtypes"] = json::Value::array();
    for (DType t : s.dtypes) j["dtypes"].push_back(std::string(dtype_name(t)));
  }
  if (!s.head_dims.empty()) j["head_dims"] = s.head_dims;
  if (s.max_head_dim > 0) j["max_head_dim"] = s.max_head_dim;
  json::Value masks = json::Value::array();
  if (s.unmasked) masks.push_back("none");
  if (s.causal) masks.push_back("causal");
  if (s.windows) masks.push_back("window");
  j["masks"] = masks;
  j["mask_alignment"] = s.alignment == MaskAlignment::top_left ? "top-left" : "bottom-right";
  j["gqa"] = s.gqa;
  j["backward"] = s.backward;
  j["seqlen_multiple"] = s.seqlen_multiple;
  j["seqlen_free_up_to"] = s.seqlen_free_up_to;
  if (s.max_seqlen_q > 0) j["max_seqlen_q"] = s.max_seqlen_q;
  if (s.max_seqlen_k > 0) j["max_seqlen_k"] = s.max_seqlen_k;
  j["packed"] = s.packed;
  j["softcap"] = s.softcap;
  j["alibi"] = s.alibi;
  j["kv_cache"] = s.kv_cache;
  j["paged"] = s.paged;
  j["kv_append"] = s.kv_append;
}

void from_json(const json::Value& j, Support& s) {
  if (!j.is_object()) bad("must be a JSON object");
  s = Support{};
  for (const auto& [key, v] : j.items()) {
    if (key == "dtypes") {
      for (const json::Value& d : list(v, key)) {
        const std::optional<DType> t = d.is_string() ? parse_dtype(d.get<std::string>()) : std::nullopt;
        if (!t) bad("\"dtypes\" holds " + d.dump() + ", not one of fp16, bf16, fp32");
        s.dtypes.insert(*t);
      }
    } else if (key == "head_dims") {
      for (const json::Value& d : list(v, key)) s.head_dims.insert(whole(d, key, 1));
    } else if (key == "max_head_dim") {
      s.max_head_dim = whole(v, key, 0);
    } else if (key == "masks") {
      s.unmasked = s.causal = s.windows = false;
      for (const json::Value& m : list(v, key)) {
        const std::string name = m.is_string() ? m.get<std::string>() : m.dump();
        if (name == "none") s.unmasked = true;
        else if (name == "causal") s.causal = true;
        else if (name == "window") s.windows = true;
        else bad("\"masks\" holds " + name + ", not one of none, causal, window");
      }
    } else if (key == "mask_alignment") {
      const std::string a = v.is_string() ? v.get<std::string>() : v.dump();
      if (a == "bottom-right") s.alignment = MaskAlignment::bottom_right;
      else if (a == "top-left") s.alignment = MaskAlignment::top_left;
      else bad("\"mask_alignment\" must be \"bottom-right\" or \"top-left\", got " + a);
    } else if (key == "gqa") {
      s.gqa = flag(v, key);
    } else if (key == "backward") {
      s.backward = flag(v, key);
    } else if (key == "packed") {
      s.packed = flag(v, key);
    } else if (key == "softcap") {
      s.softcap = flag(v, key);
    } else if (key == "alibi") {
      s.alibi = flag(v, key);
    } else if (key == "kv_cache") {
      s.kv_cache = flag(v, key);
    } else if (key == "paged") {
      s.paged = flag(v, key);
    } else if (key == "kv_append") {
      s.kv_append = flag(v, key);
    } else if (key == "seqlen_multiple") {
      s.seqlen_multiple = whole(v, key, 1);
    } else if (key == "seqlen_free_up_to") {
      s.seqlen_free_up_to = whole(v, key, 0);
    } else if (key == "max_seqlen_q") {
      s.max_seqlen_q = whole(v, key, 0);
    } else if (key == "max_seqlen_k") {
      s.max_seqlen_k = whole(v, key, 0);
    } else {
      bad("unknown member \"" + key + "\"");
    }
  }
  if (const std::string e = validate(s); !e.empty()) bad(e);
}

}  // namespace flashproof
