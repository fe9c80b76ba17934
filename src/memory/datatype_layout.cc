#include "memory/datatype_layout.h"

#include <algorithm>

namespace cumpi::memory {

ByteSpan span_of(const TypeLayout& type, std::int64_t count) {
  if (count <= 0 || type.true_extent <= 0) {
    return ByteSpan{};
  }
  const std::int64_t last = (count - 1) * type.extent;
  const std::int64_t begin = type.true_lb + std::min<std::int64_t>(0, last);
  const std::int64_t end = type.true_lb + type.true_extent + std::max<std::int64_t>(0, last);
  return ByteSpan{begin, static_cast<std::size_t>(end - begin)};
}

ByteSpan span_union(ByteSpan a, ByteSpan b) {
  if (a.empty()) {
    return b;
  }
  if (b.empty()) {
    return a;
  }
  const std::int64_t begin = std::min(a.offset, b.offset);
  const std::int64_t end = std::max(a.offset + static_cast<std::int64_t>(a.bytes),
                                    b.offset + static_cast<std::int64_t>(b.bytes));
  return ByteSpan{begin, static_cast<std::size_t>(end - begin)};
}

ByteSpan span_of_blocks(const TypeLayout& type, int blocks, const int counts[], const int displacements[]) {
  ByteSpan all;
  for (int i = 0; i < blocks; ++i) {
    ByteSpan block = span_of(type, counts[i]);
    block.offset += static_cast<std::int64_t>(displacements[i]) * type.extent;
    all = span_union(all, block);
  }
  return all;
}

ByteSpan span_of_uniform_blocks(const TypeLayout& type, int blocks, std::int64_t count_each) {
  return span_of(type, count_each * blocks);
}

bool fills_span(const TypeLayout& type, std::int64_t elements, ByteSpan span) {
  return static_cast<std::int64_t>(span.bytes) == elements * type.size;
}

bool is_contiguous(const TypeLayout& type, std::int64_t elements, ByteSpan span) {
  if (elements <= 0 || type.size == 0) {
    return true;
  }
  // Elements follow one another forwards, each one run in order.
  return type.element_in_order && (elements == 1 || type.extent == type.size) && fills_span(type, elements, span);
}

}  // namespace cumpi::memory
