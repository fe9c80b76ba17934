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
  return pointer != nullptr && !in_host_region(pointer) && query_device_memory(pointer).kind == MemoryKind::device;
}

const void* first_byte_touched(const void* pointer, int count, MPI_Datatype type) {
  ByteSpan span;
  if (count <= 0 || !cached_span(type, count, &span)) {
    return pointer;
  }
  return static_cast<const char*>(pointer) + span.offset;
}

bool buffer_on_device_slow(const void* pointer, int count, MPI_Datatype type) {
  if (memory_says_device(pointer)) {
    return true;
  }
  const void* first = first_byte_touched(pointer, count, type);
  return first != pointer && on_device(first);
}

thread_local DeviceAnswer t_device_answer __attribute__((tls_model("initial-exec"))) = {};

PointerInfo query_device_memory(const void* pointer) {
  if (pointer != nullptr && pointer == t_device_answer.pointer) {
    return t_device_answer.info;
  }
  DeviceMemory& active = device_memory();
  if (!active.device_memory_possible()) {
    return PointerInfo{};
  }
  const PointerInfo info = active.query(pointer);
  if (info.kind != MemoryKind::host) {
    t_device_answer = DeviceAnswer{pointer, info};
  }
  return info;
}

}  // namespace cumpi::memory
