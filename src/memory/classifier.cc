#include "memory/classifier.h"

#include "memory/datatype_layout.h"
#include "runtime/log.h"

namespace cumpi::memory {

void start_classifier() {
  read_process_regions();
  read_thread_stack();
  CUMPI_LOG(debug, "host regions: heap from %#lx (now to %p), image %#lx-%#lx",
            static_cast<unsigned long>(g_process_regions.heap_begin), sbrk(0),
            static_cast<unsigned long>(g_process_regions.image_begin),
            static_cast<unsigned long>(g_process_regions.image_end));
}

bool memory_says_device(const void* pointer) {
  return !in_host_region(pointer) && is_device(query_device_memory(pointer));
}

namespace {

// Where the bytes of `count` elements of `type` at `pointer` begin (the
// pointer itself when the type cannot be read; the MPI call then reports the
// bad type).
const void* first_byte_touched(const void* pointer, int count, MPI_Datatype type) {
  ByteSpan span;
  if (count <= 0 || !cached_span(type, count, &span)) {
    return pointer;
  }
  return static_cast<const char*>(pointer) + span.offset;
}

// The first byte's owner when it is device memory, else the pointer's.
PointerInfo owner_of(const void* pointer, const void* first) {
  const PointerInfo of_first = classify(first);
  if (first == pointer || is_device(of_first)) {
    return of_first;
  }
  const PointerInfo of_pointer = classify(pointer);
  return is_device(of_pointer) ? of_pointer : of_first;
}

}  // namespace

PointerInfo locate_slow(const void* pointer, int count, MPI_Datatype type) {
  return owner_of(pointer, first_byte_touched(pointer, count, type));
}

PointerInfo locate_span(const void* pointer, ByteSpan span) {
  return owner_of(pointer, span.empty() ? pointer : static_cast<const char*>(pointer) + span.offset);
}

PointerInfo query_device_memory(const void* pointer) {
  DeviceMemory& active = device_memory();
  return pointer != nullptr && active.device_memory_possible() ? active.query(pointer) : PointerInfo{};
}

}  // namespace cumpi::memory
