// The arithmetic of the reduction kernels, written once for the GPU
// (reduction_kernel.cu) and the host (the emulation, the unit tests): the
// element types, which MPI ops are defined on which, and how two elements
// combine. The reduction order is the caller's (inputs in rank order), so
// every rank computes the same bits.
#pragma once

#include <cstddef>

#include "memory/reduction_kernel_params.h"

#ifdef __CUDACC__
#define CUMPI_HD __host__ __device__
#else
#define CUMPI_HD
#endif

namespace cumpi::reduce_ops {

// C layouts of MPI's complex and pair types.
struct Complex64 {
  float re;
  float im;
};
struct Complex128 {
  double re;
  double im;
};
template <typename V>
struct ValueIndex {
  V value;
  int index;
};

// X(type id, C type) for every element type.
#define CUMPI_REDUCE_FOR_EACH_TYPE(X)                                 \
  X(CUMPI_REDUCE_INT8, signed char)                                   \
  X(CUMPI_REDUCE_UINT8, unsigned char)                                \
  X(CUMPI_REDUCE_INT16, short)                                        \
  X(CUMPI_REDUCE_UINT16, unsigned short)                              \
  X(CUMPI_REDUCE_INT32, int)                                          \
  X(CUMPI_REDUCE_UINT32, unsigned)                                    \
  X(CUMPI_REDUCE_INT64, long long)                                    \
  X(CUMPI_REDUCE_UINT64, unsigned long long)                          \
  X(CUMPI_REDUCE_FLOAT32, float)                                      \
  X(CUMPI_REDUCE_FLOAT64, double)                                     \
  X(CUMPI_REDUCE_COMPLEX64, ::cumpi::reduce_ops::Complex64)           \
  X(CUMPI_REDUCE_COMPLEX128, ::cumpi::reduce_ops::Complex128)         \
  X(CUMPI_REDUCE_BOOL, bool)                                          \
  X(CUMPI_REDUCE_FLOAT_INT, ::cumpi::reduce_ops::ValueIndex<float>)   \
  X(CUMPI_REDUCE_DOUBLE_INT, ::cumpi::reduce_ops::ValueIndex<double>) \
  X(CUMPI_REDUCE_LONG_INT, ::cumpi::reduce_ops::ValueIndex<long>)     \
  X(CUMPI_REDUCE_INT_INT, ::cumpi::reduce_ops::ValueIndex<int>)       \
  X(CUMPI_REDUCE_SHORT_INT, ::cumpi::reduce_ops::ValueIndex<short>)

// X(op id) for every op.
#define CUMPI_REDUCE_FOR_EACH_OP(X)                                                                             \
  X(CUMPI_REDUCE_SUM)                                                                                           \
  X(CUMPI_REDUCE_PROD) X(CUMPI_REDUCE_MIN) X(CUMPI_REDUCE_MAX) X(CUMPI_REDUCE_LAND) X(CUMPI_REDUCE_LOR)         \
      X(CUMPI_REDUCE_LXOR) X(CUMPI_REDUCE_BAND) X(CUMPI_REDUCE_BOR) X(CUMPI_REDUCE_BXOR) X(CUMPI_REDUCE_MAXLOC) \
          X(CUMPI_REDUCE_MINLOC)

// MPI's groups of types for reductions (MPI 4.0 §6.9.2).
enum class Group { integer, floating, complex, logical, pair };

template <typename T>
struct GroupOf {
  static constexpr Group value = Group::integer;
};
template <>
struct GroupOf<float> {
  static constexpr Group value = Group::floating;
};
template <>
struct GroupOf<double> {
  static constexpr Group value = Group::floating;
};
template <>
struct GroupOf<Complex64> {
  static constexpr Group value = Group::complex;
};
template <>
struct GroupOf<Complex128> {
  static constexpr Group value = Group::complex;
};
template <>
struct GroupOf<bool> {
  static constexpr Group value = Group::logical;
};
template <typename V>
struct GroupOf<ValueIndex<V>> {
  static constexpr Group value = Group::pair;
};

// Whether MPI defines `Op` on T.
template <typename T, unsigned Op>
CUMPI_HD constexpr bool defined() {
  constexpr Group group = GroupOf<T>::value;
  switch (Op) {
    case CUMPI_REDUCE_SUM:
    case CUMPI_REDUCE_PROD:
      return group == Group::integer || group == Group::floating || group == Group::complex;
    case CUMPI_REDUCE_MIN:
    case CUMPI_REDUCE_MAX:
      return group == Group::integer || group == Group::floating;
    case CUMPI_REDUCE_LAND:
    case CUMPI_REDUCE_LOR:
    case CUMPI_REDUCE_LXOR:
      return group == Group::integer || group == Group::logical;
    case CUMPI_REDUCE_BAND:
    case CUMPI_REDUCE_BOR:
    case CUMPI_REDUCE_BXOR:
      return group == Group::integer;
    case CUMPI_REDUCE_MAXLOC:
    case CUMPI_REDUCE_MINLOC:
      return group == Group::pair;
    default:
      return false;
  }
}

template <typename T>
CUMPI_HD inline T add(T a, T b) {
  return static_cast<T>(a + b);
}
CUMPI_HD inline Complex64 add(Complex64 a, Complex64 b) { return Complex64{a.re + b.re, a.im + b.im}; }
CUMPI_HD inline Complex128 add(Complex128 a, Complex128 b) { return Complex128{a.re + b.re, a.im + b.im}; }

template <typename T>
CUMPI_HD inline T multiply(T a, T b) {
  return static_cast<T>(a * b);
}
CUMPI_HD inline Complex64 multiply(Complex64 a, Complex64 b) {
  return Complex64{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}
CUMPI_HD inline Complex128 multiply(Complex128 a, Complex128 b) {
  return Complex128{a.re * b.re - a.im * b.im, a.re * b.im + a.im * b.re};
}

// MAXLOC/MINLOC: the larger (smaller) value; on a tie the smaller index.
template <typename V>
CUMPI_HD inline ValueIndex<V> located(ValueIndex<V> a, ValueIndex<V> b, bool want_larger) {
  if (a.value == b.value) {
    return ValueIndex<V>{a.value, a.index < b.index ? a.index : b.index};
  }
  const bool a_wins = want_larger ? a.value > b.value : a.value < b.value;
  return a_wins ? a : b;
}

// a op b, for an `Op` defined on T (defined<T, Op>()).
template <typename T, unsigned Op>
CUMPI_HD inline T combine(T a, T b) {
  if constexpr (Op == CUMPI_REDUCE_SUM) {
    return add(a, b);
  } else if constexpr (Op == CUMPI_REDUCE_PROD) {
    return multiply(a, b);
  } else if constexpr (Op == CUMPI_REDUCE_MIN) {
    return b < a ? b : a;
  } else if constexpr (Op == CUMPI_REDUCE_MAX) {
    return a < b ? b : a;
  } else if constexpr (Op == CUMPI_REDUCE_LAND) {
    return static_cast<T>((a != T{}) && (b != T{}));
  } else if constexpr (Op == CUMPI_REDUCE_LOR) {
    return static_cast<T>((a != T{}) || (b != T{}));
  } else if constexpr (Op == CUMPI_REDUCE_LXOR) {
    return static_cast<T>((a != T{}) != (b != T{}));
  } else if constexpr (Op == CUMPI_REDUCE_BAND) {
    return static_cast<T>(a & b);
  } else if constexpr (Op == CUMPI_REDUCE_BOR) {
    return static_cast<T>(a | b);
  } else if constexpr (Op == CUMPI_REDUCE_BXOR) {
    return static_cast<T>(a ^ b);
  } else if constexpr (Op == CUMPI_REDUCE_MAXLOC) {
    return located(a, b, true);
  } else {
    return located(a, b, false);
  }
}

// Elements [first, end) by `step` of the reduction: the body of the GPU
// kernel's grid-stride loop, and of the host's plain loop.
template <typename T, unsigned Op>
CUMPI_HD inline void reduce_elements(const cumpi_reduce_params& params, unsigned long long first,
                                     unsigned long long step) {
  auto* output = reinterpret_cast<T*>(params.output);
  for (unsigned long long i = first; i < params.count; i += step) {
    T accumulated = reinterpret_cast<const T*>(params.inputs[0])[i];
    for (unsigned r = 1; r < params.input_count; ++r) {
      accumulated = combine<T, Op>(accumulated, reinterpret_cast<const T*>(params.inputs[r])[i]);
    }
    output[i] = accumulated;
  }
}

// reduce_elements for the op of `params`; nothing for an op T lacks.
template <typename T>
CUMPI_HD inline void reduce_elements_of(const cumpi_reduce_params& params, unsigned long long first,
                                        unsigned long long step) {
  switch (params.op) {
#define CUMPI_REDUCE_CASE(op)                      \
  case op:                                         \
    if constexpr (defined<T, op>()) {              \
      reduce_elements<T, op>(params, first, step); \
    }                                              \
    break;
    CUMPI_REDUCE_FOR_EACH_OP(CUMPI_REDUCE_CASE)
#undef CUMPI_REDUCE_CASE
    default:
      break;
  }
}

// The whole reduction of `params` (its type and op), elements [first, end)
// by `step`.
CUMPI_HD inline void reduce_by_type(const cumpi_reduce_params& params, unsigned long long first,
                                    unsigned long long step) {
  switch (params.type) {
#define CUMPI_REDUCE_CASE(id, type)                \
  case id:                                         \
    reduce_elements_of<type>(params, first, step); \
    break;
    CUMPI_REDUCE_FOR_EACH_TYPE(CUMPI_REDUCE_CASE)
#undef CUMPI_REDUCE_CASE
    default:
      break;
  }
}

}  // namespace cumpi::reduce_ops
