// One-sided communication on device memory is refused, at once and with an
// MPI error through the window's (or, for MPI_Win_create, the
// communicator's) handler: the MPI below cumpi cannot reach device memory,
// and cumpi does not yet stage one-sided transfers. Host buffers go straight
// to the real functions.
#include <string>

#include "memory/classifier.h"
#include "mpi_wrappers/intercept.h"
#include "runtime/log.h"

namespace cumpi::wrappers {

namespace {

constexpr const char* kWindowLimit =
    "cumpi does not support windows over GPU memory (MPI_Win_create, MPI_Win_attach): use MPI_Win_allocate or "
    "host memory";
constexpr const char* kTransferLimit =
    "cumpi does not support one-sided transfers from or to GPU memory: copy through a host buffer";

// An error of a call on `win`, through the window's handler.
int refuse_on_window(MPI_Win win, int error_class, const char* call, const char* limit) {
  CUMPI_LOG(error, "%s: %s", call, limit);
  real().Win_call_errhandler(win, error_class);
  return error_class;
}

int refuse_transfer(MPI_Win win, const char* call) {
  return refuse_on_window(win, MPI_ERR_BUFFER, call, kTransferLimit);
}

}  // namespace

// Collective: the ranks agree first whether any of them offers device
// memory, so that all refuse together (one rank refusing alone would leave
// the others waiting in the real MPI_Win_create).
int intercept_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
  int on_device = size > 0 && memory::on_device(base) ? 1 : 0;
  int any_on_device = 0;
  const int rc = real().Allreduce(&on_device, &any_on_device, 1, MPI_INT, MPI_MAX, comm);
  if (rc != MPI_SUCCESS) {
    return rc;
  }
  if (any_on_device == 0) {
    return real().Win_create(base, size, disp_unit, info, comm, win);
  }
  CUMPI_LOG(error, "MPI_Win_create: %s%s", kWindowLimit, on_device != 0 ? "" : " (another rank offered GPU memory)");
  real().Comm_call_errhandler(comm, MPI_ERR_BASE);
  return MPI_ERR_BASE;
}

int intercept_Win_attach(MPI_Win win, void* base, MPI_Aint size) {
  if (size == 0 || !memory::on_device(base)) {
    return real().Win_attach(win, base, size);
  }
  return refuse_on_window(win, MPI_ERR_BASE, "MPI_Win_attach", kWindowLimit);
}

int intercept_Put(const void* origin, int origin_count, MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
                  int target_count, MPI_Datatype target_type, MPI_Win win) {
  if (!memory::on_device(origin)) {
    return real().Put(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win);
  }
  return refuse_transfer(win, "MPI_Put");
}

int intercept_Get(void* origin, int origin_count, MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
                  int target_count, MPI_Datatype target_type, MPI_Win win) {
  if (!memory::on_device(origin)) {
    return real().Get(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win);
  }
  return refuse_transfer(win, "MPI_Get");
}

int intercept_Accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target_rank,
                         MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  if (!memory::on_device(origin)) {
    return real().Accumulate(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, op,
                             win);
  }
  return refuse_transfer(win, "MPI_Accumulate");
}

int intercept_Get_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result,
                             int result_count, MPI_Datatype result_type, int target_rank, MPI_Aint target_disp,
                             int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win) {
  if (!memory::on_device(origin) && !memory::on_device(result)) {
    return real().Get_accumulate(origin, origin_count, origin_type, result, result_count, result_type, target_rank,
                                 target_disp, target_count, target_type, op, win);
  }
  return refuse_transfer(win, "MPI_Get_accumulate");
}

int intercept_Fetch_and_op(const void* origin, void* result, MPI_Datatype type, int target_rank, MPI_Aint target_disp,
                           MPI_Op op, MPI_Win win) {
  if (!memory::on_device(origin) && !memory::on_device(result)) {
    return real().Fetch_and_op(origin, result, type, target_rank, target_disp, op, win);
  }
  return refuse_transfer(win, "MPI_Fetch_and_op");
}

int intercept_Compare_and_swap(const void* origin, const void* compare, void* result, MPI_Datatype type,
                               int target_rank, MPI_Aint target_disp, MPI_Win win) {
  if (!memory::on_device(origin) && !memory::on_device(compare) && !memory::on_device(result)) {
    return real().Compare_and_swap(origin, compare, result, type, target_rank, target_disp, win);
  }
  return refuse_transfer(win, "MPI_Compare_and_swap");
}

int intercept_Rput(const void* origin, int origin_count, MPI_Datatype origin_type, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Win win,
                   MPI_Request* request) {
  if (!memory::on_device(origin)) {
    return real().Rput(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win,
                       request);
  }
  return refuse_transfer(win, "MPI_Rput");
}

int intercept_Rget(void* origin, int origin_count, MPI_Datatype origin_type, int target_rank, MPI_Aint target_disp,
                   int target_count, MPI_Datatype target_type, MPI_Win win, MPI_Request* request) {
  if (!memory::on_device(origin)) {
    return real().Rget(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type, win,
                       request);
  }
  return refuse_transfer(win, "MPI_Rget");
}

int intercept_Raccumulate(const void* origin, int origin_count, MPI_Datatype origin_type, int target_rank,
                          MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                          MPI_Request* request) {
  if (!memory::on_device(origin)) {
    return real().Raccumulate(origin, origin_count, origin_type, target_rank, target_disp, target_count, target_type,
                              op, win, request);
  }
  return refuse_transfer(win, "MPI_Raccumulate");
}

int intercept_Rget_accumulate(const void* origin, int origin_count, MPI_Datatype origin_type, void* result,
                              int result_count, MPI_Datatype result_type, int target_rank, MPI_Aint target_disp,
                              int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win,
                              MPI_Request* request) {
  if (!memory::on_device(origin) && !memory::on_device(result)) {
    return real().Rget_accumulate(origin, origin_count, origin_type, result, result_count, result_type, target_rank,
                                  target_disp, target_count, target_type, op, win, request);
  }
  return refuse_transfer(win, "MPI_Rget_accumulate");
}

}  // namespace cumpi::wrappers
