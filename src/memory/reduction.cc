#include "memory/reduction.h"

#include "memory/reduction_ops.h"

namespace cumpi::memory {

namespace {

template <typename T>
bool defined_on(unsigned op) {
  switch (op) {
#define CUMPI_REDUCE_CASE(id) \
  case id:                    \
    return reduce_ops::defined<T, id>();
    CUMPI_REDUCE_FOR_EACH_OP(CUMPI_REDUCE_CASE)
#undef CUMPI_REDUCE_CASE
    default:
      return false;
  }
}

}  // namespace

std::size_t element_bytes(ReductionType type) {
  switch (static_cast<unsigned>(type)) {
#define CUMPI_REDUCE_CASE(id, c_type) \
  case id:                            \
    return sizeof(c_type);
    CUMPI_REDUCE_FOR_EACH_TYPE(CUMPI_REDUCE_CASE)
#undef CUMPI_REDUCE_CASE
    default:
      return 0;
  }
}

bool reduction_defined(ReductionType type, ReductionOp op) {
  switch (static_cast<unsigned>(type)) {
#define CUMPI_REDUCE_CASE(id, c_type) \
  case id:                            \
    return defined_on<c_type>(static_cast<unsigned>(op));
    CUMPI_REDUCE_FOR_EACH_TYPE(CUMPI_REDUCE_CASE)
#undef CUMPI_REDUCE_CASE
    default:
      return false;
  }
}

const char* reduction_type_name(ReductionType type) {
  static const char* const names[] = {"int8",  "uint8",     "int16",      "uint16",   "int32",     "uint32",
                                      "int64", "uint64",    "float",      "double",   "complex64", "complex128",
                                      "bool",  "float_int", "double_int", "long_int", "int_int",   "short_int"};
  static_assert(sizeof(names) / sizeof(names[0]) == CUMPI_REDUCE_TYPE_COUNT, "a name per type");
  const auto index = static_cast<unsigned>(type);
  return index < CUMPI_REDUCE_TYPE_COUNT ? names[index] : "unknown";
}

void reduce_on_host(const ReductionJob& job) {
  if (job.count == 0 || job.input_count == 0) {
    return;
  }
  reduce_ops::reduce_by_type(reduction_params(job), 0, 1);
}

cumpi_reduce_params reduction_params(const ReductionJob& job) {
  cumpi_reduce_params params{};
  for (int i = 0; i < job.input_count; ++i) {
    params.inputs[i] = reinterpret_cast<unsigned long long>(job.inputs[i]);
  }
  params.output = reinterpret_cast<unsigned long long>(job.output);
  params.count = job.count;
  params.input_count = static_cast<unsigned>(job.input_count);
  params.type = static_cast<unsigned>(job.type);
  params.op = static_cast<unsigned>(job.op);
  return params;
}

}  // namespace cumpi::memory
