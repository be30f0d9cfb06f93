// Host tensors of rank <= 4 with explicit strides over shared storage, in one of the DTypes.
// Views (slices, transposes) share storage with their parent, so non-contiguous layouts such as a
// slice of a packed QKV tensor can be passed to implementations as they are.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "core/dtype.h"

namespace flashproof {

using Shape = std::array<std::int64_t, 4>;  // unused trailing dimensions have size 1

class HostTensor {
 public:
  HostTensor() = default;
  // Contiguous row-major tensor of the given shape, all bits zero.
  HostTensor(DType dtype, Shape shape, int rank = 4);

  DType dtype() const { return dtype_; }
  int rank() const { return rank_; }
  const Shape& shape() const { return shape_; }
  const Shape& strides() const { return strides_; }  // in elements
  std::int64_t offset() const { return offset_; }    // in elements, into the storage
  std::int64_t numel() const;
  bool empty() const { return !storage_; }
  bool is_contiguous() const;
  std::int64_t storage_elements() const;

  // A view with its own shape, strides and offset over the same storage. Throws
  // std::invalid_argument when the view would reach outside the storage.
  HostTensor view(Shape shape, Shape strides, std::int64_t offset, int rank = 4) const;
  // A contiguous deep copy.
  HostTensor contiguous_copy() const;

  std::int64_t element_offset(std::int64_t i0, std::int64_t i1, std::int64_t i2,
                              std::int64_t i3 = 0) const {
    return offset_ + i0 * strides_[0] + i1 * strides_[1] + i2 * strides_[2] + i3 * strides_[3];
  }
  // Values as doubles (exact for every dtype) and writes that round once to the dtype.
  double get(std::int64_t i0, std::int64_t i1, std::int64_t i2, std::int64_t i3 = 0) const {
    return from_bits(dtype_, raw_bits(element_offset(i0, i1, i2, i3)));
  }
  void set(std::int64_t i0, std::int64_t i1, std::int64_t i2, std::int64_t i3, double value) {
    set_raw_bits(element_offset(i0, i1, i2, i3), to_bits(dtype_, value));
  }
  std::uint32_t bits(std::int64_t i0, std::int64_t i1, std::int64_t i2,
                     std::int64_t i3 = 0) const {
    return raw_bits(element_offset(i0, i1, i2, i3));
  }
  void set_bits(std::int64_t i0, std::int64_t i1, std::int64_t i2, std::int64_t i3,
                std::uint32_t b) {
    set_raw_bits(element_offset(i0, i1, i2, i3), b);
  }

  // Storage-level access (index in elements of the storage), e.g. for poisoning and upload.
  std::uint32_t raw_bits(std::int64_t storage_index) const {
    return dtype_ == DType::fp32 ? raw_bits32(storage_index) : raw_bits16(storage_index);
  }
  void set_raw_bits(std::int64_t storage_index, std::uint32_t b) {
    std::byte* p = storage_->data() + storage_index * dtype_bytes(dtype_);
    if (dtype_ == DType::fp32) {
      std::memcpy(p, &b, 4);
    } else {
      const auto h = static_cast<std::uint16_t>(b);
      std::memcpy(p, &h, 2);
    }
  }
  // fn(x, bits) for every element in logical order, x its linear logical index (dims row-major),
  // each row addressed from its first element: the loop of whole-tensor passes (metrics, checks),
  // without the per-element index arithmetic of bits().
  template <class Fn>
  void for_each_bits(Fn&& fn) const {
    std::size_t x = 0;
    const std::int64_t n3 = shape_[3], s3 = strides_[3];
    for (std::int64_t i0 = 0; i0 < shape_[0]; ++i0)
      for (std::int64_t i1 = 0; i1 < shape_[1]; ++i1)
        for (std::int64_t i2 = 0; i2 < shape_[2]; ++i2) {
          const std::int64_t row = element_offset(i0, i1, i2);
          if (dtype_ == DType::fp32) {
            for (std::int64_t i3 = 0; i3 < n3; ++i3, ++x) fn(x, raw_bits32(row + i3 * s3));
          } else {
            for (std::int64_t i3 = 0; i3 < n3; ++i3, ++x) fn(x, std::uint32_t{raw_bits16(row + i3 * s3)});
          }
        }
  }
  // The same with each element's value (exact, as get()).
  template <class Fn>
  void for_each_value(Fn&& fn) const {
    with_dtype(dtype_, [&](auto t) {
      for_each_bits([&](std::size_t x, std::uint32_t b) { fn(x, from_bits(t, b)); });
    });
  }
  // The shape()[3] values of row (i0, i1, i2) into out, exact (as get()), in one loop per dtype:
  // the conversion of whole inputs to doubles (reference, bounds, baselines).
  template <class T>
  void read_row(std::int64_t i0, std::int64_t i1, std::int64_t i2, T* out) const {
    const std::int64_t row = element_offset(i0, i1, i2), n3 = shape_[3], s3 = strides_[3];
    switch (dtype_) {
      case DType::fp32:
        for (std::int64_t c = 0; c < n3; ++c) out[c] = static_cast<T>(from_bits(DType::fp32, raw_bits32(row + c * s3)));
        break;
      case DType::fp16:
        for (std::int64_t c = 0; c < n3; ++c) out[c] = static_cast<T>(from_bits(DType::fp16, raw_bits16(row + c * s3)));
        break;
      case DType::bf16:
        for (std::int64_t c = 0; c < n3; ++c) out[c] = static_cast<T>(from_bits(DType::bf16, raw_bits16(row + c * s3)));
        break;
    }
  }

  void fill_storage_bits(std::uint32_t b);  // every element of the storage, also outside the view
  std::byte* storage_data() { return storage_ ? storage_->data() : nullptr; }
  const std::byte* storage_data() const { return storage_ ? storage_->data() : nullptr; }

  std::string describe() const;  // "fp16 [2,5,4,64] strides [1280,256,64,1]"

 private:
  std::uint32_t raw_bits32(std::int64_t storage_index) const {
    std::uint32_t b;
    std::memcpy(&b, storage_->data() + storage_index * 4, 4);
    return b;
  }
  std::uint16_t raw_bits16(std::int64_t storage_index) const {
    std::uint16_t b;
    std::memcpy(&b, storage_->data() + storage_index * 2, 2);
    return b;
  }

  DType dtype_ = DType::fp32;
  int rank_ = 0;
  Shape shape_{1, 1, 1, 1};
  Shape strides_{0, 0, 0, 0};
  std::int64_t offset_ = 0;
  std::shared_ptr<std::vector<std::byte>> storage_;
};

}  // namespace flashproof
