#include "coll/nccl_library.h"

#include <dlfcn.h>

#include <cstring>

#include <mutex>

#include "runtime/log.h"

#if CUMPI_HAVE_NCCL
#include <nccl.h>
#endif

namespace cumpi::coll::nccl {

#if CUMPI_HAVE_NCCL

static_assert(kUniqueIdBytes == NCCL_UNIQUE_ID_BYTES, "cumpi's unique id is NCCL's");

struct Communicator;  // an ncclComm_t, as cumpi hands it around

namespace {

struct Functions {
#define CUMPI_NCCL_FUNCTION(name) decltype(&::name) name = nullptr;
#include "coll/nccl_functions.def"
#undef CUMPI_NCCL_FUNCTION
};

struct Library {
  Functions call;
  bool loaded = false;
  std::string why_not;
  std::string version;
};

void load(Library* library) {
  // The soname: the runtime a CUDA install or the NCCL packages provide.
  void* handle = dlopen("libnccl.so.2", RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    library->why_not = std::string("libnccl.so.2 could not be loaded (") + (why != nullptr ? why : "?") + ")";
    return;
  }
#define CUMPI_NCCL_FUNCTION(name)                                                        \
  library->call.name = reinterpret_cast<decltype(&::name)>(dlsym(handle, #name));        \
  if (library->call.name == nullptr) {                                                   \
    library->why_not = "libnccl.so.2 lacks " #name " (NCCL older than cumpi's nccl.h?)"; \
    return;                                                                              \
  }
#include "coll/nccl_functions.def"
#undef CUMPI_NCCL_FUNCTION
  int code = 0;
  if (library->call.ncclGetVersion(&code) != ncclSuccess) {
    library->why_not = "ncclGetVersion failed";
    return;
  }
  // NCCL_VERSION(X, Y, Z) is X*10000 + Y*100 + Z from 2.9 on.
  library->version =
      std::to_string(code / 10000) + "." + std::to_string(code / 100 % 100) + "." + std::to_string(code % 100);
  library->loaded = true;
  CUMPI_LOG(info, "NCCL %s loaded for the nccl collective algorithm", library->version.c_str());
}

Library& library() {
  static Library* loaded = new Library();  // lives until exit, as the dlopen()ed library does
  static std::once_flag once;
  std::call_once(once, [] { load(loaded); });
  return *loaded;
}

const Functions& nccl() { return library().call; }

ncclComm_t native(Communicator* comm) { return reinterpret_cast<ncclComm_t>(comm); }

Status checked(ncclResult_t result, const char* call, Communicator* comm) {
  if (result == ncclSuccess) {
    return Status::ok();
  }
  std::string message = std::string(call) + " failed: " + nccl().ncclGetErrorString(result);
  const char* detail = nccl().ncclGetLastError(comm != nullptr ? native(comm) : nullptr);
  if (detail != nullptr && detail[0] != '\0') {
    message += std::string(" (") + detail + ")";
  }
  return Status::error(StatusCode::nccl_error, message);
}

bool type_of(memory::ReductionType type, ncclDataType_t* out) {
  switch (type) {
    case memory::ReductionType::int8:
      *out = ncclInt8;
      return true;
    case memory::ReductionType::uint8:
      *out = ncclUint8;
      return true;
    case memory::ReductionType::int32:
      *out = ncclInt32;
      return true;
    case memory::ReductionType::uint32:
      *out = ncclUint32;
      return true;
    case memory::ReductionType::int64:
      *out = ncclInt64;
      return true;
    case memory::ReductionType::uint64:
      *out = ncclUint64;
      return true;
    case memory::ReductionType::float32:
      *out = ncclFloat32;
      return true;
    case memory::ReductionType::float64:
      *out = ncclFloat64;
      return true;
    default:
      return false;  // 16-bit integers, complex and pair types
  }
}

bool op_of(memory::ReductionOp op, ncclRedOp_t* out) {
  switch (op) {
    case memory::ReductionOp::sum:
      *out = ncclSum;
      return true;
    case memory::ReductionOp::prod:
      *out = ncclProd;
      return true;
    case memory::ReductionOp::min:
      *out = ncclMin;
      return true;
    case memory::ReductionOp::max:
      *out = ncclMax;
      return true;
    default:
      return false;  // logical, bitwise and location ops
  }
}

// NCCL's type and op for a reduction, or an error naming `call` for one
// NCCL does not have (the algorithm declined those before).
Status native_reduction(memory::ReductionType type, memory::ReductionOp op, const char* call,
                        ncclDataType_t* native_type, ncclRedOp_t* native_op) {
  if (!type_of(type, native_type) || !op_of(op, native_op)) {
    return Status::error(StatusCode::internal, std::string(call) + ": a type or op NCCL does not reduce");
  }
  return Status::ok();
}

cudaStream_t native(void* stream) { return static_cast<cudaStream_t>(stream); }

}  // namespace

bool available(std::string* why_not) {
  const Library& loaded = library();
  if (!loaded.loaded) {
    *why_not = loaded.why_not;
  }
  return loaded.loaded;
}

std::string version() { return library().version; }

bool reduces(memory::ReductionType type, memory::ReductionOp op) {
  ncclDataType_t native_type;
  ncclRedOp_t native_op;
  return native_reduction(type, op, "", &native_type, &native_op).is_ok();
}

Status unique_id(UniqueId* id) {
  ncclUniqueId made;
  Status status = checked(nccl().ncclGetUniqueId(&made), "ncclGetUniqueId", nullptr);
  std::memcpy(id->bytes, made.internal, kUniqueIdBytes);
  return status;
}

Status init(const UniqueId& id, int size, int rank, Communicator** out) {
  ncclUniqueId native_id;
  std::memcpy(native_id.internal, id.bytes, kUniqueIdBytes);
  ncclComm_t comm = nullptr;
  Status status = checked(nccl().ncclCommInitRank(&comm, size, native_id, rank), "ncclCommInitRank", nullptr);
  *out = status.is_ok() ? reinterpret_cast<Communicator*>(comm) : nullptr;
  return status;
}

void destroy(Communicator* comm) {
  Status status = checked(nccl().ncclCommDestroy(native(comm)), "ncclCommDestroy", nullptr);
  if (!status.is_ok()) {
    CUMPI_LOG(warn, "%s", status.message().c_str());
  }
}

Status all_reduce(const void* send, void* receive, std::size_t count, memory::ReductionType type,
                  memory::ReductionOp op, Communicator* comm, void* stream) {
  ncclDataType_t native_type;
  ncclRedOp_t native_op;
  Status status = native_reduction(type, op, "ncclAllReduce", &native_type, &native_op);
  if (!status.is_ok()) {
    return status;
  }
  return checked(nccl().ncclAllReduce(send, receive, count, native_type, native_op, native(comm), native(stream)),
                 "ncclAllReduce", comm);
}

Status reduce(const void* send, void* receive, std::size_t count, memory::ReductionType type, memory::ReductionOp op,
              int root, Communicator* comm, void* stream) {
  ncclDataType_t native_type;
  ncclRedOp_t native_op;
  Status status = native_reduction(type, op, "ncclReduce", &native_type, &native_op);
  if (!status.is_ok()) {
    return status;
  }
  return checked(nccl().ncclReduce(send, receive, count, native_type, native_op, root, native(comm), native(stream)),
                 "ncclReduce", comm);
}

Status broadcast(const void* send, void* receive, std::size_t bytes, int root, Communicator* comm, void* stream) {
  return checked(nccl().ncclBroadcast(send, receive, bytes, ncclUint8, root, native(comm), native(stream)),
                 "ncclBroadcast", comm);
}

Status all_gather(const void* send, void* receive, std::size_t bytes_each, Communicator* comm, void* stream) {
  return checked(nccl().ncclAllGather(send, receive, bytes_each, ncclUint8, native(comm), native(stream)),
                 "ncclAllGather", comm);
}

Status reduce_scatter(const void* send, void* receive, std::size_t count_each, memory::ReductionType type,
                      memory::ReductionOp op, Communicator* comm, void* stream) {
  ncclDataType_t native_type;
  ncclRedOp_t native_op;
  Status status = native_reduction(type, op, "ncclReduceScatter", &native_type, &native_op);
  if (!status.is_ok()) {
    return status;
  }
  return checked(
      nccl().ncclReduceScatter(send, receive, count_each, native_type, native_op, native(comm), native(stream)),
      "ncclReduceScatter", comm);
}

Status all_to_all(const void* send, void* receive, std::size_t bytes_each, int size, Communicator* comm, void* stream) {
  Status status = checked(nccl().ncclGroupStart(), "ncclGroupStart", comm);
  for (int peer = 0; peer < size && status.is_ok(); ++peer) {
    const std::size_t at = bytes_each * static_cast<std::size_t>(peer);
    status = checked(
        nccl().ncclSend(static_cast<const char*>(send) + at, bytes_each, ncclUint8, peer, native(comm), native(stream)),
        "ncclSend", comm);
    if (status.is_ok()) {
      status = checked(
          nccl().ncclRecv(static_cast<char*>(receive) + at, bytes_each, ncclUint8, peer, native(comm), native(stream)),
          "ncclRecv", comm);
    }
  }
  // The group is closed whatever happened inside it.
  Status ended = checked(nccl().ncclGroupEnd(), "ncclGroupEnd", comm);
  return status.is_ok() ? ended : status;
}

#else  // built without nccl.h

namespace {
Status not_built() { return Status::error(StatusCode::internal, "cumpi was built without nccl.h (CUMPI_WITH_NCCL)"); }
}  // namespace

bool available(std::string* why_not) {
  *why_not = "cumpi was built without nccl.h (CUMPI_WITH_NCCL)";
  return false;
}
std::string version() { return {}; }
bool reduces(memory::ReductionType, memory::ReductionOp) { return false; }
Status unique_id(UniqueId*) { return not_built(); }
Status init(const UniqueId&, int, int, Communicator** out) {
  *out = nullptr;
  return not_built();
}
void destroy(Communicator*) {}
Status all_reduce(const void*, void*, std::size_t, memory::ReductionType, memory::ReductionOp, Communicator*, void*) {
  return not_built();
}
Status reduce(const void*, void*, std::size_t, memory::ReductionType, memory::ReductionOp, int, Communicator*, void*) {
  return not_built();
}
Status broadcast(const void*, void*, std::size_t, int, Communicator*, void*) { return not_built(); }
Status all_gather(const void*, void*, std::size_t, Communicator*, void*) { return not_built(); }
Status reduce_scatter(const void*, void*, std::size_t, memory::ReductionType, memory::ReductionOp, Communicator*,
                      void*) {
  return not_built();
}
Status all_to_all(const void*, void*, std::size_t, int, Communicator*, void*) { return not_built(); }

#endif

}  // namespace cumpi::coll::nccl
