#include "memory/datatype_layout.h"
#include "runtime/real_mpi.h"

namespace cumpi::memory {

Status query_layout(MPI_Datatype type, TypeLayout* layout) {
  const RealMpi& mpi = real_mpi();
  MPI_Count size = 0;
  MPI_Count lb = 0;
  MPI_Count extent = 0;
  MPI_Count true_lb = 0;
  MPI_Count true_extent = 0;
  int rc = mpi.Type_size_x(type, &size);
  if (rc == MPI_SUCCESS) {
    rc = mpi.Type_get_extent_x(type, &lb, &extent);
  }
  if (rc == MPI_SUCCESS) {
    rc = mpi.Type_get_true_extent_x(type, &true_lb, &true_extent);
  }
  if (rc != MPI_SUCCESS) {
    return Status::mpi(rc);
  }
  *layout = TypeLayout{size, extent, true_lb, true_extent};
  return Status::ok();
}

}  // namespace cumpi::memory
