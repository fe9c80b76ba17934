// Include this instead of <mpi.h> everywhere in libcumpi.
//
// Open MPI's predefined handles (MPI_COMM_WORLD, MPI_BYTE, ...) are addresses
// of data symbols in libmpi. libcumpi does not link libmpi: it is preloaded
// into mpirun and into shells too, where a strong reference to such a symbol
// would make the dynamic loader refuse the library. Declaring the handles we
// use weak lets the library load anywhere; in an MPI program they resolve to
// libmpi's as usual. A test preloads libcumpi into /bin/true to keep this true.
#pragma once

#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#ifdef OPEN_MPI
#pragma weak ompi_mpi_comm_world
#pragma weak ompi_mpi_comm_null
#pragma weak ompi_mpi_byte
#pragma weak ompi_mpi_datatype_null
#pragma weak ompi_request_null
#pragma weak ompi_message_null
#pragma weak ompi_message_no_proc
#pragma weak ompi_mpi_errors_return
#pragma weak ompi_mpi_errors_are_fatal
#endif
