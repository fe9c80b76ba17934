// Collectives on device buffers against the MPI library itself: every
// predefined op on every predefined type that has it, through Allreduce,
// Reduce, Bcast, Allgather, Alltoall and Reduce_scatter_block, counts 0, 1,
// 7, odd and past the one-shot limit (--large adds 16 MiB and 256 MiB), in
// place and not. The oracle is the same call on host buffers, which cumpi
// passes to the MPI library untouched; every byte of every result is
// compared, and results are compared bit for bit across ranks. Also: sub-
// communicators (split, dup) used alternately, some ranks on host buffers
// while others are on device buffers, a communicator freed and made again
// (--cycles, 1000 by default) without boards, contexts or mappings left
// behind, and that the GPU algorithm ran unless CUMPI_COLL=staged (across
// nodes with CUMPI_COLL_HIERARCHY=1: that calls ran in steps).
#include <dlfcn.h>
#include <mpi.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "common/checks.h"
#include "common/coll_counters.h"
#include "common/test_memory.h"

using namespace cumpi_test;

namespace {

int g_rank = 0;
int g_size = 0;

// cumpi's IPC cache counters, when cumpi is there (the test also runs without it).
struct CacheInfo {
  std::size_t open_mappings, mapped_bytes, opens, hits, evictions;
};
CacheInfo cache_info() {
  using Function = int (*)(CacheInfo*);
  static auto* function = reinterpret_cast<Function>(dlsym(RTLD_DEFAULT, "cumpi_get_ipc_cache_info"));
  CacheInfo info{};
  if (function != nullptr) function(&info);
  return info;
}

// ---- element values --------------------------------------------------

enum class Kind { signed_int, unsigned_int, floating, complex, boolean, pair, byte };

struct TypeCase {
  MPI_Datatype type;
  const char* name;
  Kind kind;
  std::size_t bytes;        // extent of one element
  std::size_t value_bytes;  // of the value (a complex's part, a pair's value)
};

std::vector<TypeCase> type_cases() {
  return {
      {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", Kind::signed_int, 1, 1},
      {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", Kind::unsigned_int, 1, 1},
      {MPI_BYTE, "MPI_BYTE", Kind::byte, 1, 1},
      {MPI_SHORT, "MPI_SHORT", Kind::signed_int, sizeof(short), sizeof(short)},
      {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", Kind::unsigned_int, sizeof(short), sizeof(short)},
      {MPI_INT, "MPI_INT", Kind::signed_int, sizeof(int), sizeof(int)},
      {MPI_UNSIGNED, "MPI_UNSIGNED", Kind::unsigned_int, sizeof(int), sizeof(int)},
      {MPI_LONG, "MPI_LONG", Kind::signed_int, sizeof(long), sizeof(long)},
      {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", Kind::unsigned_int, sizeof(long), sizeof(long)},
      {MPI_LONG_LONG, "MPI_LONG_LONG", Kind::signed_int, sizeof(long long), sizeof(long long)},
      {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", Kind::unsigned_int, 8, 8},
      {MPI_INT16_T, "MPI_INT16_T", Kind::signed_int, 2, 2},
      {MPI_UINT32_T, "MPI_UINT32_T", Kind::unsigned_int, 4, 4},
      {MPI_INT64_T, "MPI_INT64_T", Kind::signed_int, 8, 8},
      {MPI_FLOAT, "MPI_FLOAT", Kind::floating, 4, 4},
      {MPI_DOUBLE, "MPI_DOUBLE", Kind::floating, 8, 8},
      {MPI_C_BOOL, "MPI_C_BOOL", Kind::boolean, sizeof(bool), sizeof(bool)},
      {MPI_C_FLOAT_COMPLEX, "MPI_C_FLOAT_COMPLEX", Kind::complex, 8, 4},
      {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", Kind::complex, 16, 8},
      {MPI_FLOAT_INT, "MPI_FLOAT_INT", Kind::pair, 8, 4},
      {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", Kind::pair, 16, 8},
      {MPI_LONG_INT, "MPI_LONG_INT", Kind::pair, 2 * sizeof(long), sizeof(long)},
      {MPI_2INT, "MPI_2INT", Kind::pair, 8, 4},
      {MPI_SHORT_INT, "MPI_SHORT_INT", Kind::pair, 8, 2},
  };
}

struct OpCase {
  MPI_Op op;
  const char* name;
};

std::vector<OpCase> ops_of(Kind kind) {
  const OpCase sum{MPI_SUM, "SUM"}, prod{MPI_PROD, "PROD"}, min{MPI_MIN, "MIN"}, max{MPI_MAX, "MAX"};
  const OpCase land{MPI_LAND, "LAND"}, lor{MPI_LOR, "LOR"}, lxor{MPI_LXOR, "LXOR"};
  const OpCase band{MPI_BAND, "BAND"}, bor{MPI_BOR, "BOR"}, bxor{MPI_BXOR, "BXOR"};
  switch (kind) {
    case Kind::signed_int:
    case Kind::unsigned_int:
      return {sum, prod, min, max, land, lor, lxor, band, bor, bxor};
    case Kind::floating:
      return {sum, prod, min, max};
    case Kind::complex:
      return {sum, prod};
    case Kind::boolean:
      return {land, lor, lxor};
    case Kind::byte:
      return {band, bor, bxor};
    case Kind::pair:
      return {{MPI_MAXLOC, "MAXLOC"}, {MPI_MINLOC, "MINLOC"}};
  }
  return {};
}

// A small value every op folds over any number of ranks without overflow
// or rounding: sums of [-3, 3], products of 1s and a few 2s.
long long small_value(MPI_Op op, Kind kind, int rank, std::size_t i) {
  const long long r = rank;
  const auto j = static_cast<long long>(i % 1009);
  if (op == MPI_SUM) return kind == Kind::unsigned_int ? (r + j) % 4 : (r + 2 * j) % 7 - 3;
  if (op == MPI_PROD) return (r + j) % 3 == 0 ? 2 : 1;
  if (op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR) return (r + j) % 3 != 0 ? 1 : 0;
  if (op == MPI_BAND || op == MPI_BOR || op == MPI_BXOR) return (r * 37 + j * 11) & 0x7f;
  const long long spread = (r * 7 + j * 3) % 11;
  return kind == Kind::unsigned_int ? spread : spread - 5;
}

void store_integer(void* to, long long value, std::size_t bytes) {
  switch (bytes) {
    case 1:
      *static_cast<std::int8_t*>(to) = static_cast<std::int8_t>(value);
      break;
    case 2:
      *static_cast<std::int16_t*>(to) = static_cast<std::int16_t>(value);
      break;
    case 4:
      *static_cast<std::int32_t*>(to) = static_cast<std::int32_t>(value);
      break;
    default:
      *static_cast<std::int64_t*>(to) = value;
      break;
  }
}

void store_floating(void* to, double value, std::size_t bytes) {
  if (bytes == 4) {
    *static_cast<float*>(to) = static_cast<float>(value);
  } else {
    *static_cast<double*>(to) = value;
  }
}

// A pair's int follows its value at the int's alignment (the C struct).
std::size_t index_offset(const TypeCase& t) { return (t.value_bytes + sizeof(int) - 1) / sizeof(int) * sizeof(int); }
const int& rank_index(int rank, std::size_t i) {
  static thread_local int index;
  index = (rank * 13 + static_cast<int>(i % 1000)) % 5;
  return index;
}

// Whether byte `offset` of an element carries data: a pair's padding does
// not (MPI writes it or not as it likes).
bool is_data_byte(const TypeCase& t, std::size_t offset) {
  if (t.kind != Kind::pair) return true;
  return offset < t.value_bytes || (offset >= index_offset(t) && offset < index_offset(t) + sizeof(int));
}

// `count` elements of rank `rank`'s input (padding bytes zero).
std::vector<unsigned char> input_of(const TypeCase& t, MPI_Op op, int rank, std::size_t count) {
  std::vector<unsigned char> bytes(count * t.bytes, 0);
  for (std::size_t i = 0; i < count; ++i) {
    unsigned char* element = bytes.data() + i * t.bytes;
    const long long v = small_value(op, t.kind, rank, i);
    switch (t.kind) {
      case Kind::signed_int:
      case Kind::unsigned_int:
      case Kind::byte:
        store_integer(element, v, t.bytes);
        break;
      case Kind::boolean:
        *reinterpret_cast<bool*>(element) = v != 0;
        break;
      case Kind::floating:
        store_floating(element, static_cast<double>(v), t.bytes);
        break;
      case Kind::complex:
        store_floating(element, static_cast<double>(v), t.value_bytes);
        store_floating(element + t.value_bytes, static_cast<double>(op == MPI_PROD ? 0 : v - 1), t.value_bytes);
        break;
      case Kind::pair:
        if (t.type == MPI_FLOAT_INT || t.type == MPI_DOUBLE_INT) {
          store_floating(element, static_cast<double>(v), t.value_bytes);
        } else {
          store_integer(element, v, t.value_bytes);
        }
        std::memcpy(element + index_offset(t), &(rank_index(rank, i)), sizeof(int));
        break;
    }
  }
  return bytes;
}

// ---- the calls ---------------------------------------------------------

Memory memory_of(bool device) { return device ? Memory::device : Memory::host; }

void upload(Buffer& buffer, const std::vector<unsigned char>& bytes) {
  if (!bytes.empty()) buffer.upload(bytes.data(), bytes.size());
}

std::vector<unsigned char> contents(const Buffer& buffer, std::size_t bytes) {
  std::vector<unsigned char> out(bytes);
  if (bytes > 0) buffer.download(out.data(), bytes);
  return out;
}

// One collective run twice: on host buffers (the oracle, the MPI library's
// own) and on this rank's placement; the receive buffers compared.
struct Run {
  std::function<std::size_t(int size)> send_elements;  // per rank
  std::function<std::size_t(int size)> recv_elements;
  std::function<void(const void* send, void* recv, MPI_Comm comm)> call;
  bool in_place = false;  // the input goes in the receive buffer, at in_place_offset elements
  std::function<std::size_t(int rank)> in_place_offset = [](int) { return std::size_t{0}; };
  bool result_here = true;  // whether this rank's receive buffer holds a result (not a Reduce's non-root)
};

void check_run(const char* what, const TypeCase& t, MPI_Op op, const Run& run, bool device, MPI_Comm comm) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const std::size_t send_count = run.send_elements(size);
  const std::size_t recv_count = run.recv_elements(size);
  const std::vector<unsigned char> input = input_of(t, op, rank, send_count);
  // A receive buffer filled with a marker, the input placed in it in place.
  std::vector<unsigned char> initial(recv_count * t.bytes + 1, 0xA5);
  if (run.in_place) std::memcpy(initial.data() + run.in_place_offset(rank) * t.bytes, input.data(), input.size());
  std::vector<unsigned char> results[2];
  for (int pass = 0; pass < 2; ++pass) {
    const bool on_device = pass == 1 && device;
    Buffer send(memory_of(on_device), input.size() + 1);
    Buffer recv(memory_of(on_device), initial.size());
    upload(send, input);
    upload(recv, initial);
    run.call(run.in_place ? MPI_IN_PLACE : send.data(), recv.data(), comm);
    results[pass] = contents(recv, initial.size());
  }
  if (!run.result_here) return;
  std::size_t differing = 0;
  for (std::size_t b = 0; b < initial.size(); ++b) {
    const bool data = b == initial.size() - 1 || is_data_byte(t, b % t.bytes);
    if (data && results[0][b] != results[1][b]) ++differing;
  }
  CHECK_TRUE(differing == 0, "%s: every byte as the MPI library gives it on host buffers (%zu differ)", what,
             differing);
}

std::function<std::size_t(int)> fixed(std::size_t n) {
  return [n](int) { return n; };
}
std::function<std::size_t(int)> per_rank(std::size_t n) {
  return [n](int size) { return n * static_cast<std::size_t>(size); };
}

void reductions(const TypeCase& t, const OpCase& o, std::size_t count, bool device, MPI_Comm comm) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const int n = static_cast<int>(count);
  Checks::instance().set_context(format("%s %s count %zu on %s", t.name, o.name, count, device ? "device" : "host"));
  for (bool here : {false, true}) {
    Run allreduce{fixed(count), fixed(count),
                  [&](const void* s, void* r, MPI_Comm c) { MPI_Allreduce(s, r, n, t.type, o.op, c); }, here};
    check_run(here ? "Allreduce in place" : "Allreduce", t, o.op, allreduce, device, comm);
    for (int root : {0, size - 1}) {
      // In place at the root only; the others pass their input as ever.
      Run reduce{fixed(count), fixed(count),
                 [&](const void* s, void* r, MPI_Comm c) { MPI_Reduce(s, r, n, t.type, o.op, root, c); },
                 here && rank == root};
      reduce.result_here = rank == root;
      check_run(here ? "Reduce in place at the root" : "Reduce", t, o.op, reduce, device, comm);
    }
  }
  Run scatter{per_rank(count), fixed(count),
              [&](const void* s, void* r, MPI_Comm c) { MPI_Reduce_scatter_block(s, r, n, t.type, o.op, c); }};
  check_run("Reduce_scatter_block", t, o.op, scatter, device, comm);
}

void exchanges(std::size_t count, bool device, MPI_Comm comm) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const TypeCase t{MPI_INT, "MPI_INT", Kind::signed_int, 4, 4};
  const int n = static_cast<int>(count);
  Checks::instance().set_context(format("exchanges count %zu on %s", count, device ? "device" : "host"));
  for (int root : {0, size - 1}) {
    Run bcast{fixed(count), fixed(count), [&](const void*, void* r, MPI_Comm c) { MPI_Bcast(r, n, MPI_INT, root, c); },
              true};
    check_run("Bcast", t, MPI_SUM, bcast, device, comm);
  }
  for (bool here : {false, true}) {
    Run allgather{fixed(count), per_rank(count),
                  [&](const void* s, void* r, MPI_Comm c) { MPI_Allgather(s, n, MPI_INT, r, n, MPI_INT, c); }, here,
                  [count](int r) { return count * static_cast<std::size_t>(r); }};
    check_run(here ? "Allgather in place" : "Allgather", t, MPI_SUM, allgather, device, comm);
  }
  Run alltoall{per_rank(count), per_rank(count),
               [&](const void* s, void* r, MPI_Comm c) { MPI_Alltoall(s, n, MPI_INT, r, n, MPI_INT, c); }};
  check_run("Alltoall", t, MPI_SUM, alltoall, device, comm);
}

// Random floats, whose sum depends on the order: every rank must hold the
// same bits.
void same_bits_everywhere(std::size_t count, MPI_Comm comm) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Checks::instance().set_context(format("Allreduce of random floats, count %zu", count));
  std::vector<float> input(count);
  std::uint32_t state = 2654435761U * static_cast<std::uint32_t>(rank + 1);
  for (float& value : input) {
    state = state * 1664525U + 1013904223U;
    value = static_cast<float>(state >> 8) / 16777216.0F - 0.5F;
  }
  Buffer send(Memory::device, count * sizeof(float));
  Buffer recv(Memory::device, count * sizeof(float));
  send.upload(input.data(), input.size() * sizeof(float));
  MPI_Allreduce(send.data(), recv.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM, comm);
  const std::vector<unsigned char> bytes = contents(recv, count * sizeof(float));
  std::uint64_t hash = 1469598103934665603ULL;
  for (unsigned char byte : bytes) hash = (hash ^ byte) * 1099511628211ULL;
  std::uint64_t lowest = 0, highest = 0;
  MPI_Allreduce(&hash, &lowest, 1, MPI_UINT64_T, MPI_MIN, comm);
  MPI_Allreduce(&hash, &highest, 1, MPI_UINT64_T, MPI_MAX, comm);
  CHECK_TRUE(lowest == highest, "the same result bits on every rank");
}

// Some ranks on host buffers, the others on device buffers, in one call:
// `host_rank` says which.
void mixed_ranks(MPI_Comm comm, const char* pattern, bool (*host_rank)(int rank)) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  Checks::instance().set_context(format("host and device ranks in one call (%s)", pattern));
  const std::size_t count = 4099;
  std::vector<int> input(count);
  for (std::size_t i = 0; i < count; ++i) input[i] = static_cast<int>(i) * (rank + 1);
  std::vector<int> expected(count);
  MPI_Allreduce(input.data(), expected.data(), static_cast<int>(count), MPI_INT, MPI_SUM, comm);
  const Memory memory = host_rank(rank) ? Memory::host : Memory::device;
  Buffer send(memory, count * sizeof(int));
  Buffer recv(memory, count * sizeof(int));
  send.upload(input.data(), count * sizeof(int));
  for (int round = 0; round < 20; ++round) {
    MPI_Allreduce(send.data(), recv.data(), static_cast<int>(count), MPI_INT, MPI_SUM, comm);
    std::vector<int> got(count);
    recv.download(got.data(), count * sizeof(int));
    CHECK_TRUE(got == expected, "round %d: the sum", round);
  }
  int size = 0;
  MPI_Comm_size(comm, &size);
  for (int root : {0, size - 1}) {
    Buffer reduced(memory, count * sizeof(int));
    reduced.upload(input.data(), count * sizeof(int));  // not the sum: it must be overwritten at the root
    // Off the root the receive buffer is ignored: NULL, as codes pass it.
    MPI_Reduce(send.data(), rank == root ? reduced.data() : nullptr, static_cast<int>(count), MPI_INT, MPI_SUM,
               root, comm);
    std::vector<int> got(count);
    reduced.download(got.data(), count * sizeof(int));
    if (rank == root) CHECK_TRUE(got == expected, "Reduce to root %d: the sum", root);
    recv.upload(rank == root ? expected.data() : input.data(), count * sizeof(int));
    MPI_Bcast(recv.data(), static_cast<int>(count), MPI_INT, root, comm);
    recv.download(got.data(), count * sizeof(int));
    CHECK_TRUE(got == expected, "Bcast from root %d", root);
  }
}

// The sum of elements of reduce_with_holes' type: two ints each, 8 bytes
// before and 4 after the element's address, 16 apart.
void add_pairs_with_holes(void* in, void* inout, int* length, MPI_Datatype*) {
  for (int e = 0; e < *length; ++e) {
    for (std::ptrdiff_t at : {-8, 4}) {
      int value = 0;
      int sum = 0;
      std::memcpy(&value, static_cast<char*>(in) + 16 * e + at, sizeof(int));
      std::memcpy(&sum, static_cast<char*>(inout) + 16 * e + at, sizeof(int));
      sum += value;
      std::memcpy(static_cast<char*>(inout) + 16 * e + at, &sum, sizeof(int));
    }
  }
}

// A Reduce (a commutative op of the user's) of a type with holes and a
// negative lower bound: the partial results a node's representative keeps
// between the steps span the same layout. Bytes outside the type map stay
// as they were at the root.
void reduce_with_holes(MPI_Comm comm, const char* pattern, bool (*host_rank)(int rank)) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  Checks::instance().set_context(format("Reduce of a type with holes (%s)", pattern));
  const int blocks[2] = {1, 1};
  const MPI_Aint displacements[2] = {-8, 4};
  MPI_Datatype pair_type, element;
  MPI_Type_create_hindexed(2, blocks, displacements, MPI_INT, &pair_type);
  MPI_Type_create_resized(pair_type, -8, 16, &element);
  MPI_Type_commit(&element);
  const std::size_t count = 1001;
  const std::size_t ints = count * 4;  // 16 bytes an element; the buffer's address is 8 bytes in
  std::vector<int> input(ints, -7);
  std::vector<int> expected(ints, -7);
  const int ranks_sum = size * (size + 1) / 2;
  for (std::size_t e = 0; e < count; ++e) {
    for (std::size_t at : {e * 4, e * 4 + 3}) {  // -8 and +4 bytes from element e's address (8 bytes in)
      input[at] = static_cast<int>(at) * (rank + 1);
      expected[at] = static_cast<int>(at) * ranks_sum;
    }
  }
  const Memory memory = host_rank(rank) ? Memory::host : Memory::device;
  Buffer send(memory, ints * sizeof(int));
  Buffer recv(memory, ints * sizeof(int));
  send.upload(input.data(), ints * sizeof(int));
  const int root = size - 1;
  recv.upload(input.data(), ints * sizeof(int));
  MPI_Op sum;
  MPI_Op_create(add_pairs_with_holes, 1, &sum);
  MPI_Reduce(static_cast<char*>(send.data()) + 8, rank == root ? static_cast<char*>(recv.data()) + 8 : nullptr,
             static_cast<int>(count), element, sum, root, comm);
  MPI_Op_free(&sum);
  if (rank == root) {
    std::vector<int> got(ints);
    recv.download(got.data(), ints * sizeof(int));
    std::size_t differing = 0;
    for (std::size_t i = 0; i < ints; ++i) differing += got[i] != expected[i] ? 1 : 0;
    CHECK_TRUE(differing == 0, "every int of the receive buffer (%zu differ)", differing);
  }
  MPI_Type_free(&element);
  MPI_Type_free(&pair_type);
}

int g_handler_calls = 0;
void count_handler_calls(MPI_Comm*, int*, ...) { ++g_handler_calls; }

// A Reduce that the MPI library refuses (where it does: Open MPI has no
// predefined op on a derived type) reports as the MPI library does, through
// the communicator's own handler, once: the oracle is PMPI_Reduce, which
// cumpi does not interpose, on host buffers.
void errors_as_plain_mpi(MPI_Comm comm, bool device) {
  Checks::instance().set_context(format("a refused Reduce on %s", device ? "device" : "host"));
  MPI_Comm own;
  MPI_Comm_dup(comm, &own);
  MPI_Errhandler counting;
  MPI_Comm_create_errhandler(count_handler_calls, &counting);
  MPI_Comm_set_errhandler(own, counting);
  MPI_Datatype pair;
  MPI_Type_contiguous(2, MPI_INT, &pair);
  MPI_Type_commit(&pair);
  const std::size_t count = 64;
  std::vector<int> host_send(2 * count, 1), host_recv(2 * count, 0);
  g_handler_calls = 0;
  const int plain = PMPI_Reduce(host_send.data(), host_recv.data(), static_cast<int>(count), pair, MPI_SUM, 0, own);
  const int plain_calls = g_handler_calls;
  Buffer send(memory_of(device), host_send.size() * sizeof(int));
  Buffer recv(memory_of(device), host_recv.size() * sizeof(int));
  send.upload(host_send.data(), host_send.size() * sizeof(int));
  g_handler_calls = 0;
  const int got = MPI_Reduce(send.data(), recv.data(), static_cast<int>(count), pair, MPI_SUM, 0, own);
  int plain_class = MPI_SUCCESS;
  int got_class = MPI_SUCCESS;
  MPI_Error_class(plain, &plain_class);
  MPI_Error_class(got, &got_class);
  CHECK_TRUE(got_class == plain_class, "error class %d, as plain MPI's %d", got_class, plain_class);
  CHECK_TRUE(g_handler_calls == plain_calls, "the communicator's handler ran %d times, as with plain MPI (%d)",
             g_handler_calls, plain_calls);
  MPI_Type_free(&pair);
  MPI_Errhandler_free(&counting);
  MPI_Comm_free(&own);
}

// Allgather against the result computed here (across nodes in steps the
// host oracle of check_run goes in steps too): every rank's block, in
// place and not, some ranks on host buffers, the byte after the buffer
// untouched.
void allgather_blocks(MPI_Comm comm, const char* pattern, bool (*host_rank)(int rank)) {
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(comm, &rank);
  MPI_Comm_size(comm, &size);
  const Memory memory = host_rank(rank) ? Memory::host : Memory::device;
  for (std::size_t count : {std::size_t{1}, std::size_t{7}, std::size_t{4099}}) {
    for (bool in_place : {false, true}) {
      Checks::instance().set_context(
          format("Allgather of %zu ints%s (%s)", count, in_place ? " in place" : "", pattern));
      const std::size_t total = count * static_cast<std::size_t>(size);
      auto value = [count](int r, std::size_t i) { return static_cast<int>(1000003 * r + i + count); };
      std::vector<int> expected(total + 1, -3);
      for (int r = 0; r < size; ++r) {
        for (std::size_t i = 0; i < count; ++i) expected[static_cast<std::size_t>(r) * count + i] = value(r, i);
      }
      std::vector<int> own(count);
      for (std::size_t i = 0; i < count; ++i) own[i] = value(rank, i);
      std::vector<int> initial(total + 1, -3);
      if (in_place) std::copy(own.begin(), own.end(), initial.begin() + static_cast<std::ptrdiff_t>(rank * count));
      Buffer send(memory, count * sizeof(int));
      Buffer recv(memory, initial.size() * sizeof(int));
      send.upload(own.data(), count * sizeof(int));
      recv.upload(initial.data(), initial.size() * sizeof(int));
      MPI_Allgather(in_place ? MPI_IN_PLACE : send.data(), static_cast<int>(count), MPI_INT, recv.data(),
                    static_cast<int>(count), MPI_INT, comm);
      std::vector<int> got(initial.size());
      recv.download(got.data(), got.size() * sizeof(int));
      std::size_t differing = 0;
      for (std::size_t i = 0; i < got.size(); ++i) differing += got[i] != expected[i] ? 1 : 0;
      CHECK_TRUE(differing == 0, "every rank's block in its place, the int after untouched (%zu differ)", differing);
    }
  }
}

// Allreduces alternating between the world, a split and a duplicate.
void alternating_communicators() {
  MPI_Comm halves, twin;
  MPI_Comm_split(MPI_COMM_WORLD, g_rank % 2, g_rank, &halves);
  MPI_Comm_dup(MPI_COMM_WORLD, &twin);
  const TypeCase t{MPI_DOUBLE, "MPI_DOUBLE", Kind::floating, 8, 8};
  const OpCase max{MPI_MAX, "MAX"};
  for (int round = 0; round < 10; ++round) {
    for (MPI_Comm comm : {MPI_COMM_WORLD, halves, twin}) reductions(t, max, 33 + round, true, comm);
  }
  // Mapped by node over two nodes, the first puts every host rank on one
  // node, the second one host and one device rank on each.
  mixed_ranks(twin, "even ranks on the host", [](int rank) { return rank % 2 == 0; });
  mixed_ranks(twin, "the lower half on the host", [](int rank) { return rank < g_size / 2; });
  reduce_with_holes(twin, "every rank on the device", [](int) { return false; });
  reduce_with_holes(twin, "even ranks on the host", [](int rank) { return rank % 2 == 0; });
  allgather_blocks(twin, "every rank on the device", [](int) { return false; });
  allgather_blocks(twin, "even ranks on the host", [](int rank) { return rank % 2 == 0; });
  allgather_blocks(twin, "the lower half on the host", [](int rank) { return rank < g_size / 2; });
  errors_as_plain_mpi(twin, false);
  errors_as_plain_mpi(twin, true);
  MPI_Comm_free(&halves);
  MPI_Comm_free(&twin);
}

// Whether the world's ranks are on more than one node.
bool spans_nodes() {
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_size = 0;
  MPI_Comm_size(node, &node_size);
  MPI_Comm_free(&node);
  return node_size < g_size;
}

// A communicator made, used on device buffers and freed, `cycles` times.
void communicator_churn(int cycles) {
  Checks::instance().set_context(format("%d communicators made, used and freed", cycles));
  const CollInfo before = coll_info();
  const CacheInfo cache_before = cache_info();
  const std::size_t count = 1000;
  std::vector<int> input(count, g_rank + 1);
  Buffer send(Memory::device, count * sizeof(int));
  Buffer recv(Memory::device, count * sizeof(int));
  send.upload(input.data(), count * sizeof(int));
  bool all_right = true;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    MPI_Comm comm;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Allreduce(send.data(), recv.data(), static_cast<int>(count), MPI_INT, MPI_SUM, comm);
    std::vector<int> got(count);
    recv.download(got.data(), count * sizeof(int));
    all_right = all_right && got == std::vector<int>(count, g_size * (g_size + 1) / 2);
    MPI_Comm_free(&comm);
  }
  CHECK_TRUE(all_right, "every sum right");
  const CollInfo after = coll_info();
  CHECK_EQ(static_cast<long long>(after.boards_made - before.boards_made),
           static_cast<long long>(after.boards_released - before.boards_released), "every board made is released");
  CHECK_EQ(static_cast<long long>(after.nccl_made - before.nccl_made),
           static_cast<long long>(after.nccl_destroyed - before.nccl_destroyed),
           "every NCCL communicator made is destroyed");
  CHECK_TRUE(cache_info().open_mappings <= cache_before.open_mappings + static_cast<std::size_t>(g_size),
             "no mapping left per communicator");
}

}  // namespace

int main(int argc, char** argv) {
  bool large = false;
  int cycles = 1000;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--large") == 0) large = true;
    if (std::strcmp(argv[i], "--cycles") == 0 && i + 1 < argc) cycles = std::atoi(argv[++i]);
  }
  init_device_before_mpi();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  const CollInfo at_start = coll_info();
  for (const TypeCase& t : type_cases()) {
    for (const OpCase& o : ops_of(t.kind)) {
      for (std::size_t count : {0, 1, 7}) reductions(t, o, count, true, MPI_COMM_WORLD);
    }
  }
  const TypeCase int_case{MPI_INT, "MPI_INT", Kind::signed_int, 4, 4};
  const TypeCase double_case{MPI_DOUBLE, "MPI_DOUBLE", Kind::floating, 8, 8};
  std::vector<std::size_t> counts = {1001, 65536, 65537};
  if (large) counts.insert(counts.end(), {std::size_t{4} << 20, std::size_t{64} << 20});  // 16 MiB, 256 MiB of ints
  for (std::size_t count : counts) {
    reductions(int_case, {MPI_SUM, "SUM"}, count, true, MPI_COMM_WORLD);
    if (count < (std::size_t{1} << 20)) reductions(double_case, {MPI_MIN, "MIN"}, count, true, MPI_COMM_WORLD);
    exchanges(count, true, MPI_COMM_WORLD);
    same_bits_everywhere(count, MPI_COMM_WORLD);
  }
  for (std::size_t count : {0, 1, 7}) exchanges(count, true, MPI_COMM_WORLD);
  alternating_communicators();
  communicator_churn(cycles);
  // Used and left to MPI_Finalize, which releases what cumpi keeps for it
  // (across nodes in steps: communicators of its own, freed there).
  MPI_Comm left_to_finalize;
  MPI_Comm_dup(MPI_COMM_WORLD, &left_to_finalize);
  reductions(double_case, {MPI_MIN, "MIN"}, 4099, true, left_to_finalize);
  Checks::instance().set_context("algorithms");
  const CollInfo at_end = coll_info();
  const char* forced = std::getenv("CUMPI_COLL");
  const bool staged_only = forced != nullptr && std::string(forced) == "staged";
  if (under_cumpi()) {
    CHECK_TRUE((at_end.on_gpu > at_start.on_gpu) == !staged_only,
               "the GPU algorithm ran %zu calls, the staged one %zu (CUMPI_COLL %s)", at_end.on_gpu - at_start.on_gpu,
               at_end.staged - at_start.staged, forced != nullptr ? forced : "default");
  }
  const char* hierarchy = std::getenv("CUMPI_COLL_HIERARCHY");
  if (under_cumpi() && hierarchy != nullptr && std::strcmp(hierarchy, "1") == 0 && spans_nodes()) {
    CHECK_TRUE(at_end.hierarchical > at_start.hierarchical, "%zu calls in steps across nodes",
               at_end.hierarchical - at_start.hierarchical);
  }
  Checks::instance().set_context("end");
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
