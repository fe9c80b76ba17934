// Counts of MPI-4's large-count calls as the int counts of the calls cumpi
// implements: the count itself where it fits an int, else one element of a
// contiguous type of `count` elements (MPI_Type_contiguous_c), which moves
// the same bytes in the same order and reports the same status (MPI_Status
// counts bytes, so MPI_Get_count_c with the user's type is unchanged).
#pragma once

#include "runtime/mpi_api.h"

namespace cumpi::wrappers {

#if MPI_VERSION >= 4

// A count that fits an int, as one (a negative count stays negative, for the
// int call to refuse).
bool fits_int(MPI_Count count);
int as_int(MPI_Count count);

// The int-count form of a large count: the count itself where it fits an
// int, else one element of a contiguous type of the whole count.
class IntCountForm {
 public:
  bool ok() const { return error_ == MPI_SUCCESS; }
  int error() const { return error_; }
  int count() const { return count_; }
  MPI_Datatype type() const { return type_; }

 protected:
  IntCountForm(MPI_Count count, MPI_Datatype type) : count_(as_int(count)), type_(type) {}
  // The count did not fit: the call takes one `whole` (made with `error`).
  void take_whole(int error, MPI_Datatype whole) {
    error_ = error;
    count_ = 1;
    type_ = whole;
  }

 private:
  int count_;
  MPI_Datatype type_;
  int error_ = MPI_SUCCESS;
};

// For a call that is over when it returns: a type made here is freed then.
class CallCount : public IntCountForm {
 public:
  CallCount(MPI_Count count, MPI_Datatype type);
  ~CallCount();
  CallCount(const CallCount&) = delete;
  CallCount& operator=(const CallCount&) = delete;

 private:
  MPI_Datatype made_{};
  bool owns_ = false;
};

// For a call that leaves a request (nonblocking, persistent): the request
// may use the type until it is freed, so a type made here is kept, one per
// (type, count), until MPI_Finalize.
class RequestCount : public IntCountForm {
 public:
  RequestCount(MPI_Count count, MPI_Datatype type);
};

#endif

// `type` was freed: kept types made of it are no longer found by it (a new
// type may get its handle), though kept for their requests. Nothing without
// MPI-4.
void forget_large_count_types_of(MPI_Datatype type);

// At MPI_Finalize, before the real one: frees every kept type.
void free_large_count_types();

}  // namespace cumpi::wrappers
