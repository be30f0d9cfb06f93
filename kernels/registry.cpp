#include "kernels/registry.h"

#include <stdexcept>
#include <string>

#include "kernels/fa1/fa1_attention.h"
#include "kernels/fa2/fa2_attention.h"
#include "kernels/naive/naive_attention.h"

namespace flashproof {
namespace {

struct Registry {
  std::vector<std::unique_ptr<AttentionImpl>> owned;
  std::vector<AttentionImpl*> views;
  void add(std::unique_ptr<AttentionImpl> impl) {
    views.push_back(impl.get());
    owned.push_back(std::move(impl));
  }
};

Registry& registry() {
  static Registry r = [] {
    Registry x;
    x.add(make_naive_attention());
    x.add(make_fa2_attention(false));
    x.add(make_fa2_attention(true));
    x.add(make_fa1_attention());
    return x;
  }();
  return r;
}

}  // namespace

const std::vector<AttentionImpl*>& implementations() { return registry().views; }

AttentionImpl* find_implementation(std::string_view name) {
  for (AttentionImpl* impl : implementations())
    if (impl->name() == name) return impl;
  return nullptr;
}

void register_implementation(std::unique_ptr<AttentionImpl> impl) {
  if (find_implementation(impl->name()))
    throw std::invalid_argument("an implementation named '" + impl->name() + "' is registered");
  registry().add(std::move(impl));
}

}  // namespace flashproof
