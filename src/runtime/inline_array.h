// A run of values of a size known at run time, inline up to N (the common
// case on hot paths: no allocation), on the heap beyond.
#pragma once

#include <array>
#include <cstddef>
#include <memory>

namespace cumpi::runtime {

template <typename T, std::size_t N>
class InlineArray {
 public:
  // The values are left uninitialised, as a plain array's: pass `fill` to
  // set them.
  explicit InlineArray(std::size_t size) {
    if (size > N) {
      heap_.reset(new T[size]);  // default-initialised: plain data stays unset
      data_ = heap_.get();
    }
  }
  InlineArray(std::size_t size, const T& fill) : InlineArray(size) {
    for (std::size_t i = 0; i < size; ++i) data_[i] = fill;
  }
  InlineArray(const InlineArray&) = delete;
  InlineArray& operator=(const InlineArray&) = delete;

  T* data() { return data_; }
  T& operator[](std::size_t i) { return data_[i]; }

 private:
  std::array<T, N> inline_;
  std::unique_ptr<T[]> heap_;
  T* data_ = inline_.data();
};

}  // namespace cumpi::runtime
