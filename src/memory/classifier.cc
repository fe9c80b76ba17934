#include "memory/classifier.h"

namespace cumpi::memory {

void start_classifier() { read_process_regions(); }

void stop_backend() { backend().shutdown(); }

const char* backend_name() { return backend().name(); }

PointerInfo query_backend(const void* pointer) {
  Backend& active = backend();
  if (!active.device_memory_possible()) {
    return PointerInfo{};
  }
  return active.query(pointer);
}

}  // namespace cumpi::memory
