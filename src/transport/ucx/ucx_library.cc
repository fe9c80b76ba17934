#include "transport/ucx/ucx_library.h"

#include <dlfcn.h>

#include <mutex>

namespace cumpi::transport::ucx {

namespace {

struct Library {
  Functions call;
  bool loaded = false;
  std::string why_not;
};

void load(Library* library) {
  void* handle = dlopen("libucp.so.0", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    library->why_not = std::string("libucp.so.0 could not be loaded (") + (why != nullptr ? why : "?") + ")";
    return;
  }
  // dlsym on the handle also searches libucp's own dependencies (libucs).
#define CUMPI_UCX_FUNCTION(name)                                                  \
  library->call.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name)); \
  if (library->call.name == nullptr) {                                            \
    library->why_not = "libucp.so.0 lacks " #name;                                \
    return;                                                                       \
  }
#include "transport/ucx/ucx_functions.def"
#undef CUMPI_UCX_FUNCTION
  library->loaded = true;
}

Library& loaded_library() {
  static Library* library = new Library();  // lives until exit, as the dlopen()ed library does
  static std::once_flag once;
  std::call_once(once, [] { load(library); });
  return *library;
}

}  // namespace

const Functions* library(std::string* why_not) {
  Library& library = loaded_library();
  if (!library.loaded) {
    *why_not = library.why_not;
    return nullptr;
  }
  return &library.call;
}

const Functions& ucp() { return loaded_library().call; }

Status failure(const char* call, ucs_status_t status) {
  return Status::error(StatusCode::ucx_error, std::string(call) + " failed: " + ucp().ucs_status_string(status));
}

}  // namespace cumpi::transport::ucx
