#include "kernels/registry.h"

#include <memory>

#include "kernels/naive/naive_attention.h"

namespace flashproof {

const std::vector<AttentionImpl*>& implementations() {
  static const auto owned = [] {
    std::vector<std::unique_ptr<AttentionImpl>> v;
    v.push_back(make_naive_attention());
    return v;
  }();
  static const auto views = [] {
    std::vector<AttentionImpl*> v;
    for (const auto& impl : owned) v.push_back(impl.get());
    return v;
  }();
  return views;
}

AttentionImpl* find_implementation(std::string_view name) {
  for (AttentionImpl* impl : implementations())
    if (impl->name() == name) return impl;
  return nullptr;
}

}  // namespace flashproof
