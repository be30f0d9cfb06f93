#include "core/tensor.h"

#include <cstring>
#include <sstream>
#include <stdexcept>

namespace flashproof {

HostTensor::HostTensor(DType dtype, Shape shape, int rank)
    : dtype_(dtype), rank_(rank), shape_(shape) {
  std::int64_t n = 1;
  for (int d = 3; d >= 0; --d) {
    if (shape_[d] < 1) throw std::invalid_argument("tensor dimensions must be >= 1");
    strides_[d] = n;
    n *= shape_[d];
  }
  storage_ = std::make_shared<std::vector<std::byte>>(static_cast<std::size_t>(n) *
                                                      dtype_bytes(dtype));
}

std::int64_t HostTensor::numel() const {
  return shape_[0] * shape_[1] * shape_[2] * shape_[3];
}

std::int64_t HostTensor::storage_elements() const {
  return storage_ ? static_cast<std::int64_t>(storage_->size()) / dtype_bytes(dtype_) : 0;
}

bool HostTensor::is_contiguous() const {
  std::int64_t n = 1;
  for (int d = 3; d >= 0; --d) {
    if (shape_[d] != 1 && strides_[d] != n) return false;
    n *= shape_[d];
  }
  return true;
}

HostTensor HostTensor::view(Shape shape, Shape strides, std::int64_t offset, int rank) const {
  // The lowest and highest element the view touches must lie inside the storage.
  std::int64_t lo = offset, hi = offset;
  for (int d = 0; d < 4; ++d) {
    if (shape[d] < 1) throw std::invalid_argument("view dimensions must be >= 1");
    const std::int64_t reach = (shape[d] - 1) * strides[d];
    (reach < 0 ? lo : hi) += reach;
  }
  if (lo < 0 || hi >= storage_elements())
    throw std::invalid_argument("view reaches outside its storage");
  HostTensor t = *this;
  t.shape_ = shape;
  t.strides_ = strides;
  t.offset_ = offset;
  t.rank_ = rank;
  return t;
}

HostTensor HostTensor::contiguous_copy() const {
  HostTensor out(dtype_, shape_, rank_);
  for (std::int64_t a = 0; a < shape_[0]; ++a)
    for (std::int64_t b = 0; b < shape_[1]; ++b)
      for (std::int64_t c = 0; c < shape_[2]; ++c)
        for (std::int64_t d = 0; d < shape_[3]; ++d) out.set_bits(a, b, c, d, bits(a, b, c, d));
  return out;
}

void HostTensor::fill_storage_bits(std::uint32_t b) {
  for (std::int64_t i = 0, n = storage_elements(); i < n; ++i) set_raw_bits(i, b);
}

std::string HostTensor::describe() const {
  std::ostringstream s;
  s << dtype_name(dtype_) << " [";
  for (int d = 0; d < rank_; ++d) s << (d ? "," : "") << shape_[d];
  s << "] strides [";
  for (int d = 0; d < rank_; ++d) s << (d ? "," : "") << strides_[d];
  s << "]";
  return s.str();
}

}  // namespace flashproof
