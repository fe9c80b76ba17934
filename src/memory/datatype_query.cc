#include "memory/datatype_layout.h"

#include <atomic>

#include "memory/datatype_order.h"
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
  TypeMapShape shape;
  Status status = query_type_map_shape(type, &shape);
  if (!status.is_ok()) {
    return status;
  }
  *layout = TypeLayout{size, extent, true_lb, true_extent, shape.is_run()};
  return Status::ok();
}

namespace {

std::atomic<unsigned> g_type_generation{0};

// The bounds of the type a thread asked about last.
struct TypeBounds {
  MPI_Datatype type{};
  unsigned generation = 0;
  bool valid = false;
  TypeLayout layout;  // without the type map's order, which needs more calls
};
thread_local TypeBounds t_type_bounds __attribute__((tls_model("initial-exec")));

}  // namespace

bool cached_span(MPI_Datatype type, int count, ByteSpan* span) {
  TypeBounds& cached = t_type_bounds;
  const unsigned generation = g_type_generation.load(std::memory_order_relaxed);
  if (!cached.valid || cached.type != type || cached.generation != generation) {
    MPI_Count size = 0;
    MPI_Count lb = 0;
    MPI_Count extent = 0;
    MPI_Count true_lb = 0;
    MPI_Count true_extent = 0;
    const RealMpi& mpi = real_mpi();
    if (mpi.Type_size_x(type, &size) != MPI_SUCCESS || mpi.Type_get_extent_x(type, &lb, &extent) != MPI_SUCCESS ||
        mpi.Type_get_true_extent_x(type, &true_lb, &true_extent) != MPI_SUCCESS) {
      return false;
    }
    cached = TypeBounds{type, generation, true, TypeLayout{size, extent, true_lb, true_extent, false}};
  }
  *span = span_of(cached.layout, count);
  return true;
}

void forget_datatypes() {
  g_type_generation.fetch_add(1, std::memory_order_relaxed);
  forget_type_map_shapes();
}

}  // namespace cumpi::memory
