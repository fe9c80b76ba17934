// MPI's predefined datatypes and ops as the reduction kernels know them
// (memory/reduction.h). Everything else (user-defined ops, derived types,
// long double, types the kernels do not have) is declined, with why.
#pragma once

#include <string>

#include "memory/reduction.h"
#include "runtime/mpi_api.h"

namespace cumpi::coll {

// The element type of a predefined MPI datatype; false when the kernels do
// not reduce it.
bool reduction_type_of(MPI_Datatype type, memory::ReductionType* out);
// The kernels' op for a predefined MPI op; false for user-defined ones and
// MPI_REPLACE/MPI_NO_OP.
bool reduction_op_of(MPI_Op op, memory::ReductionOp* out);

// Both, and that MPI defines the op on the type; *why_not says what
// declined.
bool reduction_of(MPI_Datatype type, MPI_Op op, memory::ReductionType* element, memory::ReductionOp* reduction,
                  std::string* why_not);

}  // namespace cumpi::coll
