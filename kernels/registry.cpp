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
  std::vector<AttentionImpl*> views, variants;
  std::vector<const AttentionImpl*> variant_bases;  // variants[i] is the tile variant of variant_bases[i]
  // The implementation, and its other compiled tile set as a variant (kernels/registry.h).
  void add(std::unique_ptr<AttentionImpl> impl) {
    std::unique_ptr<AttentionImpl> variant = impl->with_alternate_tiles();
    views.push_back(impl.get());
    const AttentionImpl* base = impl.get();
    owned.push_back(std::move(impl));
    if (variant == nullptr || named(variant->name())) return;
    variants.push_back(variant.get());
    variant_bases.push_back(base);
    owned.push_back(std::move(variant));
  }
  bool named(const std::string& name) const {
    for (const std::vector<AttentionImpl*>* list : {&views, &variants})
      for (const AttentionImpl* x : *list)
        if (x->name() == name) return true;
    return false;
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

const std::vector<AttentionImpl*>& tile_variants() { return registry().variants; }

AttentionImpl* tile_variant(const AttentionImpl& base) {
  const Registry& r = registry();
  for (std::size_t i = 0; i < r.variants.size(); ++i)
    if (r.variant_bases[i] == &base) return r.variants[i];
  return nullptr;
}

AttentionImpl* find_implementation(std::string_view name) {
  for (AttentionImpl* impl : implementations())
    if (impl->name() == name) return impl;
  for (AttentionImpl* impl : tile_variants())
    if (impl->name() == name) return impl;
  return nullptr;
}

void register_implementation(std::unique_ptr<AttentionImpl> impl) {
  if (find_implementation(impl->name()))
    throw std::invalid_argument("an implementation named '" + impl->name() + "' is registered");
  registry().add(std::move(impl));
}

}  // namespace flashproof
