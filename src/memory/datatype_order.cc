#include "memory/datatype_order.h"

#include <mutex>
#include <unordered_map>
#include <vector>

#include "runtime/errors.h"
#include "runtime/real_mpi.h"

namespace cumpi::memory {

namespace type_map {

TypeMapShape concat(TypeMapShape a, TypeMapShape b) {
  if (a.kind == TypeMapShape::Kind::empty) {
    return b;
  }
  if (b.kind == TypeMapShape::Kind::empty) {
    return a;
  }
  if (a.is_run() && b.is_run() && b.first == a.first + a.bytes) {
    return TypeMapShape::run_of(a.first, a.bytes + b.bytes);
  }
  return TypeMapShape::scattered();
}

TypeMapShape repeat(TypeMapShape element, std::int64_t copies, std::int64_t stride, std::int64_t offset) {
  if (copies <= 0 || element.kind == TypeMapShape::Kind::empty) {
    return TypeMapShape{};
  }
  if (!element.is_run()) {
    return element;
  }
  // Copies follow one another without a gap only when each starts where the
  // one before ended.
  if (copies == 1 || stride == element.bytes) {
    return TypeMapShape::run_of(offset + element.first, copies * element.bytes);
  }
  return TypeMapShape::scattered();
}

}  // namespace type_map

namespace {

using type_map::concat;
using type_map::repeat;

// What MPI_Type_get_envelope says of a type. Where the MPI has large
// counts (MPI 4) the _c form is asked: the int form fails for a type made
// with a count past INT_MAX (MPICH says "use MPI_Type_get_envelope_c"), as
// the whole-count types of the _c wrappers are.
struct Envelope {
  MPI_Count integers = 0;
  MPI_Count addresses = 0;
  MPI_Count large_counts = 0;
  MPI_Count datatypes = 0;
  int combiner = MPI_COMBINER_NAMED;
};

Status read_envelope(MPI_Datatype type, Envelope* envelope) {
#if MPI_VERSION >= 4
  return from_mpi(real_mpi().Type_get_envelope_c(type, &envelope->integers, &envelope->addresses,
                                                 &envelope->large_counts, &envelope->datatypes,
                                                 &envelope->combiner));
#else
  int integers = 0;
  int addresses = 0;
  int datatypes = 0;
  const int rc = real_mpi().Type_get_envelope(type, &integers, &addresses, &datatypes, &envelope->combiner);
  envelope->integers = integers;
  envelope->addresses = addresses;
  envelope->datatypes = datatypes;
  return from_mpi(rc);
#endif
}

// The arguments a derived type was made with (MPI_Type_get_contents); the
// datatypes among them are freed when done (derived ones are new references
// the caller owns; predefined ones cannot be freed). `large_counts` is not
// empty only for a type made by a _c constructor, whose count arguments are
// all there instead of in `ints`.
class Contents {
 public:
  Status read(MPI_Datatype type, const Envelope& envelope) {
    ints.resize(static_cast<std::size_t>(envelope.integers));
    aints.resize(static_cast<std::size_t>(envelope.addresses));
    large_counts.resize(static_cast<std::size_t>(envelope.large_counts));
    types.resize(static_cast<std::size_t>(envelope.datatypes));
#if MPI_VERSION >= 4
    return from_mpi(real_mpi().Type_get_contents_c(type, envelope.integers, envelope.addresses,
                                                   envelope.large_counts, envelope.datatypes, ints.data(),
                                                   aints.data(), large_counts.data(), types.data()));
#else
    return from_mpi(real_mpi().Type_get_contents(type, static_cast<int>(envelope.integers),
                                                 static_cast<int>(envelope.addresses),
                                                 static_cast<int>(envelope.datatypes), ints.data(), aints.data(),
                                                 types.data()));
#endif
  }
  ~Contents() {
    for (MPI_Datatype& child : types) {
      Envelope envelope;
      if (read_envelope(child, &envelope).is_ok() && envelope.combiner != MPI_COMBINER_NAMED) {
        real_mpi().Type_free(&child);
      }
    }
  }
  std::vector<int> ints;
  std::vector<MPI_Aint> aints;
  std::vector<MPI_Count> large_counts;
  std::vector<MPI_Datatype> types;
};

Status shape_of(MPI_Datatype type, TypeMapShape* shape);

// A predefined type: one run when its size covers its true extent (the
// pair types MPI_SHORT_INT and MPI_LONG_DOUBLE_INT have padding inside).
Status named_shape(MPI_Datatype type, TypeMapShape* shape) {
  MPI_Count size = 0;
  MPI_Count true_lb = 0;
  MPI_Count true_extent = 0;
  int rc = real_mpi().Type_size_x(type, &size);
  if (rc == MPI_SUCCESS) {
    rc = real_mpi().Type_get_true_extent_x(type, &true_lb, &true_extent);
  }
  if (rc != MPI_SUCCESS) {
    return from_mpi(rc);
  }
  *shape = size == true_extent ? TypeMapShape::run_of(true_lb, size) : TypeMapShape::scattered();
  return Status::ok();
}

Status extent_of(MPI_Datatype type, std::int64_t* extent) {
  MPI_Count lb = 0;
  MPI_Count value = 0;
  const int rc = real_mpi().Type_get_extent_x(type, &lb, &value);
  *extent = value;
  return from_mpi(rc);
}

// `copies` elements of `child` from `offset`, one child extent apart.
Status run_of_children(MPI_Datatype child, std::int64_t copies, std::int64_t offset, TypeMapShape* shape) {
  TypeMapShape element;
  std::int64_t extent = 0;
  Status status = shape_of(child, &element);
  if (status.is_ok()) status = extent_of(child, &extent);
  if (status.is_ok()) *shape = repeat(element, copies, extent, offset);
  return status;
}

// The subarray combiner: elements of the array's sub-block in memory order.
// One run when the sub-block is a slab: leading dimensions of one element,
// then one partial dimension, then only whole dimensions.
Status subarray_shape(const Contents& contents, TypeMapShape* shape) {
  const int dims = contents.ints[0];
  const int* sizes = &contents.ints[1];
  const int* subsizes = &contents.ints[1 + static_cast<std::size_t>(dims)];
  const int* starts = &contents.ints[1 + 2 * static_cast<std::size_t>(dims)];
  const bool c_order = contents.ints[1 + 3 * static_cast<std::size_t>(dims)] == MPI_ORDER_C;
  // Dimension k in memory order: slowest first.
  auto at = [&](const int* values, int k) { return values[c_order ? k : dims - 1 - k]; };
  std::int64_t elements = 1;
  std::int64_t first = 0;
  for (int k = 0; k < dims; ++k) {
    elements *= at(subsizes, k);
    first = first * at(sizes, k) + at(starts, k);
  }
  if (elements == 0) {
    *shape = TypeMapShape{};
    return Status::ok();
  }
  int partial = 0;  // the first dimension whose sub-size is not 1
  while (partial < dims && at(subsizes, partial) == 1) {
    ++partial;
  }
  bool slab = true;
  for (int k = partial + 1; k < dims; ++k) {
    slab = slab && at(subsizes, k) == at(sizes, k);
  }
  TypeMapShape element;
  std::int64_t extent = 0;
  Status status = shape_of(contents.types[0], &element);
  if (status.is_ok()) status = extent_of(contents.types[0], &extent);
  if (status.is_ok()) {
    *shape = slab ? repeat(element, elements, extent, first * extent) : TypeMapShape::scattered();
  }
  return status;
}

// Blocks of children at displacements, in order: `block(i)` gives the
// i-th block's element count and byte offset.
template <typename Block>
Status blocks_shape(int count, Block block, MPI_Datatype child, TypeMapShape* shape) {
  TypeMapShape element;
  std::int64_t extent = 0;
  Status status = shape_of(child, &element);
  if (status.is_ok()) status = extent_of(child, &extent);
  TypeMapShape all;
  for (int i = 0; status.is_ok() && i < count && all.kind != TypeMapShape::Kind::scattered; ++i) {
    std::int64_t copies = 0;
    std::int64_t offset = 0;
    block(i, extent, &copies, &offset);
    all = concat(all, repeat(element, copies, extent, offset));
  }
  *shape = all;
  return status;
}

// A type made by a _c constructor: a contiguous one (as the _c wrappers
// make) is read; the others are left to the staged path, which hands MPI the
// type itself.
Status large_count_shape(int combiner, const Contents& c, TypeMapShape* shape) {
  if (combiner == MPI_COMBINER_CONTIGUOUS) {
    return run_of_children(c.types[0], c.large_counts[0], 0, shape);
  }
  *shape = TypeMapShape::scattered();
  return Status::ok();
}

Status derived_shape(MPI_Datatype type, int combiner, const Contents& c, TypeMapShape* shape) {
  if (!c.large_counts.empty()) {
    return large_count_shape(combiner, c, shape);
  }
  const std::vector<int>& i = c.ints;
  const std::vector<MPI_Aint>& a = c.aints;
  switch (combiner) {
    case MPI_COMBINER_DUP:
    case MPI_COMBINER_RESIZED:  // the bounds move, the type map does not
      return shape_of(c.types[0], shape);
    case MPI_COMBINER_CONTIGUOUS:
      return run_of_children(c.types[0], i[0], 0, shape);
    case MPI_COMBINER_VECTOR:
    case MPI_COMBINER_HVECTOR: {
      TypeMapShape block;
      std::int64_t extent = 0;
      Status status = run_of_children(c.types[0], i[1], 0, &block);
      if (status.is_ok()) status = extent_of(c.types[0], &extent);
      const std::int64_t stride = combiner == MPI_COMBINER_VECTOR ? i[2] * extent : a[0];
      *shape = repeat(block, i[0], stride, 0);
      return status;
    }
    case MPI_COMBINER_INDEXED:
      return blocks_shape(i[0], [&](int k, std::int64_t extent, std::int64_t* n, std::int64_t* at) {
        *n = i[1 + k];
        *at = i[1 + i[0] + k] * extent;
      }, c.types[0], shape);
    case MPI_COMBINER_HINDEXED:
      return blocks_shape(i[0], [&](int k, std::int64_t, std::int64_t* n, std::int64_t* at) {
        *n = i[1 + k];
        *at = a[k];
      }, c.types[0], shape);
    case MPI_COMBINER_INDEXED_BLOCK:
      return blocks_shape(i[0], [&](int k, std::int64_t extent, std::int64_t* n, std::int64_t* at) {
        *n = i[1];
        *at = i[2 + k] * extent;
      }, c.types[0], shape);
    case MPI_COMBINER_HINDEXED_BLOCK:
      return blocks_shape(i[0], [&](int k, std::int64_t, std::int64_t* n, std::int64_t* at) {
        *n = i[1];
        *at = a[k];
      }, c.types[0], shape);
    case MPI_COMBINER_STRUCT: {
      TypeMapShape all;
      for (int k = 0; k < i[0] && all.kind != TypeMapShape::Kind::scattered; ++k) {
        TypeMapShape member;
        Status status = run_of_children(c.types[static_cast<std::size_t>(k)], i[1 + k], a[k], &member);
        if (!status.is_ok()) {
          return status;
        }
        all = concat(all, member);
      }
      *shape = all;
      return Status::ok();
    }
    case MPI_COMBINER_SUBARRAY:
      return subarray_shape(c, shape);
    case MPI_COMBINER_F90_REAL:
    case MPI_COMBINER_F90_COMPLEX:
    case MPI_COMBINER_F90_INTEGER:
      return named_shape(type, shape);
    default:
      // Distributed arrays and anything newer: the staged path, which hands
      // MPI the type itself, is right for them.
      *shape = TypeMapShape::scattered();
      return Status::ok();
  }
}

Status shape_of(MPI_Datatype type, TypeMapShape* shape) {
  Envelope envelope;
  Status status = read_envelope(type, &envelope);
  if (!status.is_ok()) {
    return status;
  }
  if (envelope.combiner == MPI_COMBINER_NAMED) {
    return named_shape(type, shape);
  }
  Contents contents;
  status = contents.read(type, envelope);
  return status.is_ok() ? derived_shape(type, envelope.combiner, contents, shape) : status;
}

class ShapeCache {
 public:
  bool find(MPI_Datatype type, TypeMapShape* shape) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = shapes_.find(type);
    if (found == shapes_.end()) {
      return false;
    }
    *shape = found->second;
    return true;
  }
  void keep(MPI_Datatype type, TypeMapShape shape) {
    std::lock_guard<std::mutex> lock(mutex_);
    shapes_[type] = shape;
  }
  void clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    shapes_.clear();
  }

 private:
  std::mutex mutex_;
  std::unordered_map<MPI_Datatype, TypeMapShape> shapes_;
};

ShapeCache& shape_cache() {
  static ShapeCache* cache = new ShapeCache();  // lives until exit
  return *cache;
}

}  // namespace

// Only the handles the caller holds are cached: those of a type's children
// may be fresh references, reused for other types once released.
Status query_type_map_shape(MPI_Datatype type, TypeMapShape* shape) {
  if (shape_cache().find(type, shape)) {
    return Status::ok();
  }
  Status status = shape_of(type, shape);
  if (status.is_ok()) {
    shape_cache().keep(type, *shape);
  }
  return status;
}

void forget_type_map_shapes() { shape_cache().clear(); }

}  // namespace cumpi::memory
