// Include this instead of <mpi.h> everywhere in libcumpi.
//
// Open MPI's predefined handles (MPI_COMM_WORLD, MPI_BYTE, ...) are addresses
// of data symbols in libmpi. libcumpi links no MPI library: it is preloaded
// into mpirun and shells too, and into Python before mpi4py dlopen()s libmpi.
// So the handles cumpi uses are looked up in the MPI library at run time; a
// use of any other handle leaves an undefined symbol, which the link
// (-Wl,--no-undefined) refuses.
#pragma once

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#ifdef OPEN_MPI
namespace cumpi::detail {
struct OpenMpiHandles {
  MPI_Comm comm_world = nullptr;
  MPI_Comm comm_self = nullptr;
  MPI_Comm comm_null = nullptr;
  MPI_Errhandler errors_return = nullptr;
  MPI_Datatype byte = nullptr;
  MPI_Datatype int_type = nullptr;
  MPI_Op op_max = nullptr;
  MPI_Request request_null = nullptr;
  MPI_Info info_null = nullptr;
  MPI_Message message_null = nullptr;
  MPI_Message message_no_proc = nullptr;
};
// Resolved from the MPI library once it is loaded; null members before.
const OpenMpiHandles& open_mpi_handles();
// Any other predefined object by its symbol (ompi_mpi_float...); null when
// the library lacks it (Fortran types in a build without Fortran).
void* open_mpi_object(const char* symbol);
}  // namespace cumpi::detail

#undef MPI_COMM_WORLD
#undef MPI_COMM_SELF
#undef MPI_COMM_NULL
#undef MPI_ERRORS_RETURN
#undef MPI_BYTE
#undef MPI_INT
#undef MPI_MAX
#undef MPI_REQUEST_NULL
#undef MPI_INFO_NULL
#undef MPI_MESSAGE_NULL
#undef MPI_MESSAGE_NO_PROC
#define MPI_COMM_WORLD (::cumpi::detail::open_mpi_handles().comm_world)
#define MPI_COMM_SELF (::cumpi::detail::open_mpi_handles().comm_self)
#define MPI_COMM_NULL (::cumpi::detail::open_mpi_handles().comm_null)
#define MPI_ERRORS_RETURN (::cumpi::detail::open_mpi_handles().errors_return)
#define MPI_BYTE (::cumpi::detail::open_mpi_handles().byte)
#define MPI_INT (::cumpi::detail::open_mpi_handles().int_type)
#define MPI_MAX (::cumpi::detail::open_mpi_handles().op_max)
#define MPI_REQUEST_NULL (::cumpi::detail::open_mpi_handles().request_null)
#define MPI_INFO_NULL (::cumpi::detail::open_mpi_handles().info_null)
#define MPI_MESSAGE_NULL (::cumpi::detail::open_mpi_handles().message_null)
#define MPI_MESSAGE_NO_PROC (::cumpi::detail::open_mpi_handles().message_no_proc)
#endif
