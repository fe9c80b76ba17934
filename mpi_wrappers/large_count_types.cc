#include "mpi_wrappers/large_count_types.h"

#include <climits>
#include <mutex>
#include <vector>

#include "mpi_wrappers/intercept.h"

namespace cumpi::wrappers {

#if MPI_VERSION >= 4

bool fits_int(MPI_Count count) { return count <= INT_MAX; }

int as_int(MPI_Count count) { return count < 0 ? -1 : static_cast<int>(count); }

namespace {

int make_whole_type(MPI_Count count, MPI_Datatype type, MPI_Datatype* whole) {
  int rc = real().Type_contiguous_c(count, type, whole);
  if (rc == MPI_SUCCESS) {
    rc = real().Type_commit(whole);
  }
  return rc;
}

// Through cumpi's own MPI_Type_free, so that every cache of a type's shape
// forgets the handle, which MPI may give again.
void free_whole_type(MPI_Datatype* whole) { intercept_Type_free(whole); }

struct KeptType {
  MPI_Datatype base;
  MPI_Count count;
  MPI_Datatype whole;
  bool findable;  // false once `base` was freed
};

std::mutex g_kept_lock;
std::vector<KeptType> g_kept;

int kept_whole_type(MPI_Count count, MPI_Datatype type, MPI_Datatype* whole) {
  const std::lock_guard<std::mutex> hold(g_kept_lock);
  for (const KeptType& kept : g_kept) {
    if (kept.findable && kept.base == type && kept.count == count) {
      *whole = kept.whole;
      return MPI_SUCCESS;
    }
  }
  const int rc = make_whole_type(count, type, whole);
  if (rc == MPI_SUCCESS) {
    g_kept.push_back(KeptType{type, count, *whole, true});
  }
  return rc;
}

}  // namespace

CallCount::CallCount(MPI_Count count, MPI_Datatype type) : IntCountForm(count, type) {
  if (fits_int(count)) {
    return;
  }
  const int error = make_whole_type(count, type, &made_);
  owns_ = error == MPI_SUCCESS;
  take_whole(error, made_);
}

CallCount::~CallCount() {
  if (owns_) {
    free_whole_type(&made_);
  }
}

RequestCount::RequestCount(MPI_Count count, MPI_Datatype type) : IntCountForm(count, type) {
  if (fits_int(count)) {
    return;
  }
  MPI_Datatype whole = type;
  const int error = kept_whole_type(count, type, &whole);
  take_whole(error, whole);
}

void forget_large_count_types_of(MPI_Datatype type) {
  const std::lock_guard<std::mutex> hold(g_kept_lock);
  for (KeptType& kept : g_kept) {
    if (kept.base == type) {
      kept.findable = false;
    }
  }
}

void free_large_count_types() {
  std::vector<KeptType> kept;
  {
    const std::lock_guard<std::mutex> hold(g_kept_lock);
    kept.swap(g_kept);
  }
  for (KeptType& type : kept) {
    free_whole_type(&type.whole);
  }
}

#else

void forget_large_count_types_of(MPI_Datatype) {}
void free_large_count_types() {}

#endif

}  // namespace cumpi::wrappers
