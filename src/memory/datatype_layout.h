// Which bytes of a buffer an MPI call touches. A staged copy moves the whole
// true extent of (buffer, count, datatype): the host copy then has the
// device buffer's exact layout, and MPI is handed the same datatype, so the
// message on the wire is what plain MPI would have sent.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/mpi_api.h"
#include "runtime/status.h"

namespace cumpi::memory {

struct TypeLayout {
  std::int64_t size = 0;         // bytes of data in one element
  std::int64_t extent = 0;       // stride between consecutive elements
  std::int64_t true_lb = 0;      // offset of the first byte touched
  std::int64_t true_extent = 0;  // from the first to the last byte touched
  // One element's data bytes are one run in type-map order: MPI packs them
  // as they lie (datatype_order.h).
  bool element_in_order = false;
};

// Bytes relative to a buffer pointer: [offset, offset + bytes).
struct ByteSpan {
  std::int64_t offset = 0;
  std::size_t bytes = 0;

  bool empty() const { return bytes == 0; }
};

// The bytes `count` elements touch.
ByteSpan span_of(const TypeLayout& type, std::int64_t count);

// The bytes touched by blocks of counts[i] elements at displacements[i]
// elements (the v-collectives); displacements == nullptr means i * count_each.
ByteSpan span_of_blocks(const TypeLayout& type, int blocks, const int counts[], const int displacements[]);

// Same, with every block count_each elements at i * count_each.
ByteSpan span_of_uniform_blocks(const TypeLayout& type, int blocks, std::int64_t count_each);

ByteSpan span_union(ByteSpan a, ByteSpan b);

// True when the span holds only data, no holes: a host->device copy-back of
// the whole span then writes nothing the call does not own. The order of
// the data inside the span may still differ from MPI's packed order.
bool fills_span(const TypeLayout& type, std::int64_t elements, ByteSpan span);

// True when the span is the call's data in MPI's packed order, byte for
// byte: its raw bytes are the message, and the first k bytes of a partly
// filled receive are its first k message bytes.
bool is_contiguous(const TypeLayout& type, std::int64_t elements, ByteSpan span);

// The layout of an MPI datatype (through the real MPI).
Status query_layout(MPI_Datatype type, TypeLayout* layout);

// The bytes `count` elements of `type` touch (span_of), with the type's
// bounds cached per thread for the last type asked about: the host path
// asks on every watched receive. False when the type cannot be read.
bool cached_span(MPI_Datatype type, int count, ByteSpan* span);

// MPI_Type_free: a freed handle may come back as another type, so every
// cached answer about types is dropped.
void forget_datatypes();

}  // namespace cumpi::memory
