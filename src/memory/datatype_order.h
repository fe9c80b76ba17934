// Whether a datatype's data lies in memory in the order MPI packs it.
//
// Byte counts alone cannot tell: a struct {int at 4, int at 0} has no holes
// (size 8 over a true extent of 8) but packs its second int first, and a
// type resized to a negative extent walks its elements backwards. Copying
// such a buffer's span as raw bytes (a rendezvous message, the prefix of a
// partly filled receive) would put bytes in the wrong places. The type map
// is walked through MPI_Type_get_envelope/get_contents and summarised as
// one run of bytes, or none, or "scattered"; the answer is cached per
// handle until the next MPI_Type_free.
#pragma once

#include <cstdint>

#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::memory {

// One element's type map, in type-map order.
struct TypeMapShape {
  enum class Kind { empty, run, scattered };
  Kind kind = Kind::empty;
  std::int64_t first = 0;  // a run: the offset of its first byte from the buffer pointer
  std::int64_t bytes = 0;  // a run: its length

  static TypeMapShape run_of(std::int64_t first, std::int64_t bytes) {
    return bytes == 0 ? TypeMapShape{} : TypeMapShape{Kind::run, first, bytes};
  }
  static TypeMapShape scattered() { return TypeMapShape{Kind::scattered, 0, 0}; }
  bool is_run() const { return kind == Kind::run; }
};

// The shape of one element of `type` (through the real MPI; cached).
Status query_type_map_shape(MPI_Datatype type, TypeMapShape* shape);

// Forgets the cached shapes: a freed handle may come back as another type.
void forget_type_map_shapes();

// The pure rules, tested by themselves.
namespace type_map {
// The type map of `a` followed by that of `b`.
TypeMapShape concat(TypeMapShape a, TypeMapShape b);
// `copies` elements of shape `element`, `stride` bytes apart, from `offset`
// (a vector is `count` copies of a block, itself copies of its element).
TypeMapShape repeat(TypeMapShape element, std::int64_t copies, std::int64_t stride, std::int64_t offset);
}  // namespace type_map

}  // namespace cumpi::memory
