#include "runtime/real_mpi.h"

#include <dlfcn.h>
#include <link.h>

#include <cstdlib>
#include <mutex>

#include "runtime/log.h"

namespace cumpi::detail {

std::atomic<bool> g_real_mpi_loaded{false};
RealMpi g_real_mpi;

namespace {

bool defined_in_libcumpi(void* symbol) {
  Dl_info found{};
  Dl_info ours{};
  return dladdr(symbol, &found) != 0 && dladdr(reinterpret_cast<void*>(&load_real_mpi), &ours) != 0 &&
         found.dli_fbase == ours.dli_fbase;
}

struct MpiLibrarySearch {
  void* handle = nullptr;
};

// Fallback when RTLD_NEXT finds nothing (libmpi loaded with RTLD_LOCAL by a
// program that dlopen()ed it): the first loaded object that defines PMPI_Init
// and is not libcumpi.
int find_object_defining_pmpi(dl_phdr_info* info, size_t, void* data) {
  auto* search = static_cast<MpiLibrarySearch*>(data);
  if (info->dlpi_name == nullptr || info->dlpi_name[0] == '\0') {
    return 0;
  }
  void* handle = dlopen(info->dlpi_name, RTLD_LAZY | RTLD_NOLOAD);
  if (handle == nullptr) {
    return 0;
  }
  void* symbol = dlsym(handle, "PMPI_Init");
  if (symbol != nullptr && !defined_in_libcumpi(symbol)) {
    search->handle = handle;
    return 1;
  }
  dlclose(handle);
  return 0;
}

void* mpi_library_handle() {
  if (dlsym(RTLD_NEXT, "PMPI_Init") != nullptr) {
    return RTLD_NEXT;
  }
  MpiLibrarySearch search;
  dl_iterate_phdr(find_object_defining_pmpi, &search);
  return search.handle;
}

template <typename Fn>
void resolve(void* library, Fn& slot, const char* symbol) {
  slot = reinterpret_cast<Fn>(dlsym(library, symbol));
  if (slot == nullptr) {
    CUMPI_LOG(error, "cannot find %s in the MPI library (%s); is this an MPI program?", symbol, dlerror());
    std::abort();
  }
}

}  // namespace

#ifdef OPEN_MPI
namespace {

// The object an Open MPI handle stands for. The global scope comes first: an
// executable that uses MPI_COMM_WORLD holds a copy of ompi_mpi_comm_world
// (a copy relocation), and that copy, not libmpi's original, is the one
// MPI_Init initialises. Python and other programs that dlopen libmpi
// privately have no copy: their MPI library answers.
void* handle_object(void* library, const char* name) {
  void* object = dlsym(RTLD_DEFAULT, name);
  return object != nullptr ? object : dlsym(library, name);
}

}  // namespace

void* open_mpi_object(const char* symbol) {
  void* library = mpi_library_handle();
  return library == nullptr ? nullptr : handle_object(library, symbol);
}

const OpenMpiHandles& open_mpi_handles() {
  static OpenMpiHandles handles;
  static std::atomic<bool> resolved{false};
  if (resolved.load(std::memory_order_acquire)) {
    return handles;
  }
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  void* library = mpi_library_handle();
  if (library == nullptr || resolved.load(std::memory_order_relaxed)) {
    return handles;
  }
  handles.comm_world = static_cast<MPI_Comm>(handle_object(library, "ompi_mpi_comm_world"));
  handles.comm_self = static_cast<MPI_Comm>(handle_object(library, "ompi_mpi_comm_self"));
  handles.comm_null = static_cast<MPI_Comm>(handle_object(library, "ompi_mpi_comm_null"));
  handles.errors_return = static_cast<MPI_Errhandler>(handle_object(library, "ompi_mpi_errors_return"));
  handles.byte = static_cast<MPI_Datatype>(handle_object(library, "ompi_mpi_byte"));
  handles.int_type = static_cast<MPI_Datatype>(handle_object(library, "ompi_mpi_int"));
  handles.op_max = static_cast<MPI_Op>(handle_object(library, "ompi_mpi_op_max"));
  handles.request_null = static_cast<MPI_Request>(handle_object(library, "ompi_request_null"));
  handles.info_null = static_cast<MPI_Info>(handle_object(library, "ompi_mpi_info_null"));
  handles.message_null = static_cast<MPI_Message>(handle_object(library, "ompi_message_null"));
  handles.message_no_proc = static_cast<MPI_Message>(handle_object(library, "ompi_message_no_proc"));
  if (handles.comm_world == nullptr || handles.comm_self == nullptr || handles.comm_null == nullptr ||
      handles.errors_return == nullptr || handles.byte == nullptr || handles.int_type == nullptr ||
      handles.op_max == nullptr || handles.request_null == nullptr || handles.info_null == nullptr ||
      handles.message_null == nullptr || handles.message_no_proc == nullptr) {
    CUMPI_LOG(error, "the MPI library lacks Open MPI's predefined handles");
    std::abort();
  }
  resolved.store(true, std::memory_order_release);
  return handles;
}
#endif

void load_real_mpi() {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  if (g_real_mpi_loaded.load(std::memory_order_relaxed)) {
    return;
  }
  void* library = mpi_library_handle();
  if (library == nullptr) {
    CUMPI_LOG(error, "no MPI library is loaded in this process; cumpi must sit under an MPI program");
    std::abort();
  }
#define CUMPI_REAL(name) resolve(library, g_real_mpi.name, "PMPI_" #name);
#include "runtime/real_functions.def"
  g_real_mpi_loaded.store(true, std::memory_order_release);
}

}  // namespace cumpi::detail
