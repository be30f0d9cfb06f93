#include "properties/check_support.h"

namespace flashproof::properties {

std::optional<CheckRecord> judged(AttentionImpl& impl, const Case& c) {
  CheckRecord r = run_check(c, impl);
  if (!r.inputs_in_domain) return std::nullopt;
  return r;
}

const TensorCheck* tensor_check(const CheckRecord& r, const std::string& name) {
  for (const TensorCheck& t : r.tensors)
    if (t.name == name) return &t;
  return nullptr;
}

}  // namespace flashproof::properties
