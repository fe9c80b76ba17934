#include "coll/reduction_type.h"

#include <climits>
#include <utility>
#include <vector>

#ifdef OPEN_MPI
// The handles this file names are looked up by symbol, as mpi_api.h does
// for the few the rest of cumpi uses (libcumpi links no MPI library).
#undef OMPI_PREDEFINED_GLOBAL
#define OMPI_PREDEFINED_GLOBAL(type, global) (static_cast<type>(::cumpi::detail::open_mpi_object(#global)))
#endif

namespace cumpi::coll {

namespace {

using memory::ReductionOp;
using memory::ReductionType;

template <typename Integer>
constexpr ReductionType signed_of() {
  return sizeof(Integer) == 1   ? ReductionType::int8
         : sizeof(Integer) == 2 ? ReductionType::int16
         : sizeof(Integer) == 4 ? ReductionType::int32
                                : ReductionType::int64;
}
template <typename Integer>
constexpr ReductionType unsigned_of() {
  return sizeof(Integer) == 1   ? ReductionType::uint8
         : sizeof(Integer) == 2 ? ReductionType::uint16
         : sizeof(Integer) == 4 ? ReductionType::uint32
                                : ReductionType::uint64;
}

// Built on first use, once the MPI library is loaded. MPI_CHAR is left
// out: MPI defines no reduction on it. Handles an MPI build lacks (Fortran
// types without Fortran) are null or MPI_DATATYPE_NULL and never match.
const std::vector<std::pair<MPI_Datatype, ReductionType>>& known_types() {
  static const auto* types = new std::vector<std::pair<MPI_Datatype, ReductionType>>{
      {MPI_SIGNED_CHAR, ReductionType::int8},
      {MPI_UNSIGNED_CHAR, ReductionType::uint8},
      {MPI_BYTE, ReductionType::uint8},
      {MPI_SHORT, signed_of<short>()},
      {MPI_UNSIGNED_SHORT, unsigned_of<unsigned short>()},
      {MPI_INT, signed_of<int>()},
      {MPI_UNSIGNED, unsigned_of<unsigned>()},
      {MPI_LONG, signed_of<long>()},
      {MPI_UNSIGNED_LONG, unsigned_of<unsigned long>()},
      {MPI_LONG_LONG, signed_of<long long>()},
      {MPI_LONG_LONG_INT, signed_of<long long>()},
      {MPI_UNSIGNED_LONG_LONG, unsigned_of<unsigned long long>()},
      {MPI_INT8_T, ReductionType::int8},
      {MPI_UINT8_T, ReductionType::uint8},
      {MPI_INT16_T, ReductionType::int16},
      {MPI_UINT16_T, ReductionType::uint16},
      {MPI_INT32_T, ReductionType::int32},
      {MPI_UINT32_T, ReductionType::uint32},
      {MPI_INT64_T, ReductionType::int64},
      {MPI_UINT64_T, ReductionType::uint64},
      {MPI_AINT, signed_of<MPI_Aint>()},
      {MPI_OFFSET, signed_of<MPI_Offset>()},
      {MPI_COUNT, signed_of<MPI_Count>()},
      {MPI_FLOAT, ReductionType::float32},
      {MPI_DOUBLE, ReductionType::float64},
      {MPI_C_BOOL, ReductionType::boolean},
      {MPI_C_FLOAT_COMPLEX, ReductionType::complex64},
      {MPI_C_COMPLEX, ReductionType::complex64},
      {MPI_C_DOUBLE_COMPLEX, ReductionType::complex128},
      {MPI_CXX_FLOAT_COMPLEX, ReductionType::complex64},
      {MPI_CXX_DOUBLE_COMPLEX, ReductionType::complex128},
      {MPI_CXX_BOOL, ReductionType::boolean},
      {MPI_FLOAT_INT, ReductionType::float_int},
      {MPI_DOUBLE_INT, ReductionType::double_int},
      {MPI_LONG_INT, ReductionType::long_int},
      {MPI_2INT, ReductionType::int_int},
      {MPI_SHORT_INT, ReductionType::short_int},
      {MPI_INTEGER, ReductionType::int32},
      {MPI_REAL, ReductionType::float32},
      {MPI_DOUBLE_PRECISION, ReductionType::float64},
      {MPI_COMPLEX, ReductionType::complex64},
      {MPI_DOUBLE_COMPLEX, ReductionType::complex128},
  };
  return *types;
}

const std::vector<std::pair<MPI_Op, ReductionOp>>& known_ops() {
  static const auto* ops = new std::vector<std::pair<MPI_Op, ReductionOp>>{
      {MPI_SUM, ReductionOp::sum},   {MPI_PROD, ReductionOp::prod},     {MPI_MIN, ReductionOp::min},
      {MPI_MAX, ReductionOp::max},   {MPI_LAND, ReductionOp::land},     {MPI_LOR, ReductionOp::lor},
      {MPI_LXOR, ReductionOp::lxor}, {MPI_BAND, ReductionOp::band},     {MPI_BOR, ReductionOp::bor},
      {MPI_BXOR, ReductionOp::bxor}, {MPI_MAXLOC, ReductionOp::maxloc}, {MPI_MINLOC, ReductionOp::minloc},
  };
  return *ops;
}

}  // namespace

bool reduction_type_of(MPI_Datatype type, ReductionType* out) {
  if (type == MPI_DATATYPE_NULL) {
    return false;
  }
  for (const auto& [known, element] : known_types()) {
    if (known == type && known != MPI_Datatype{}) {
      *out = element;
      return true;
    }
  }
  return false;
}

bool reduction_op_of(MPI_Op op, ReductionOp* out) {
  for (const auto& [known, reduction] : known_ops()) {
    if (known == op) {
      *out = reduction;
      return true;
    }
  }
  return false;
}

// MPI_BYTE takes the bitwise ops only (its uint8 element would take more).
bool reduction_of(MPI_Datatype type, MPI_Op op, ReductionType* element, ReductionOp* reduction, std::string* why_not) {
  if (!reduction_op_of(op, reduction)) {
    *why_not = "a user-defined op (or MPI_REPLACE/MPI_NO_OP)";
    return false;
  }
  if (!reduction_type_of(type, element)) {
    *why_not = "a datatype the reduction kernels do not have";
    return false;
  }
  const bool bitwise =
      *reduction == ReductionOp::band || *reduction == ReductionOp::bor || *reduction == ReductionOp::bxor;
  if (!memory::reduction_defined(*element, *reduction) || (type == MPI_BYTE && !bitwise)) {
    *why_not = "an op MPI does not define on the datatype (MPI reports it)";
    return false;
  }
  return true;
}

}  // namespace cumpi::coll
