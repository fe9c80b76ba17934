// Collectives on every mix of host and device buffers: every predefined op
// on int, float, double, signed char and double complex, MAXLOC/MINLOC on
// pair types, a user-defined op, MPI_IN_PLACE, the rooted and v-variants
// (whose gaps must stay untouched), Alltoallw, Reduce_local, the
// neighbourhood collectives on a line and a star, and every nonblocking form.
// Expected values are computed on each rank from the formula every rank's
// input follows.
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "common/checks.h"
#include "common/test_memory.h"
#include "common/test_options.h"

using namespace cumpi_test;

namespace {

int g_rank = 0;
int g_size = 0;

enum class Placement { all_host, all_device, mixed };
const char* name(Placement placement) {
  return placement == Placement::all_host ? "host" : placement == Placement::all_device ? "device" : "mixed";
}
Memory send_memory(Placement placement) {
  if (placement == Placement::mixed) return g_rank % 2 == 0 ? Memory::device : Memory::host;
  return placement == Placement::all_host ? Memory::host : Memory::device;
}
Memory recv_memory(Placement placement) {
  if (placement == Placement::mixed) return g_rank % 2 == 0 ? Memory::host : Memory::device;
  return send_memory(placement);
}

template <typename T>
void put(Buffer& buffer, const std::vector<T>& values) {
  buffer.upload(values.data(), values.size() * sizeof(T));
}
template <typename T>
std::vector<T> get(const Buffer& buffer, std::size_t count) {
  std::vector<T> values(count);
  buffer.download(values.data(), count * sizeof(T));
  return values;
}
template <typename T>
bool same(const std::vector<T>& a, const std::vector<T>& b) {
  return a == b;
}

// ---- Allreduce over every predefined op --------------------------------

template <typename T>
void check_allreduce(Placement placement, MPI_Datatype type, MPI_Op op, const char* op_name,
                     std::function<T(int rank, int i)> input, std::function<T(T, T)> fold, int count, bool in_place,
                     bool nonblocking) {
  Checks::instance().set_context(format("Allreduce %s %s count %d%s%s", name(placement), op_name, count,
                                        in_place ? " in place" : "", nonblocking ? " (Iallreduce)" : ""));
  std::vector<T> mine(static_cast<std::size_t>(count));
  std::vector<T> expected(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    mine[i] = input(g_rank, i);
    expected[i] = input(0, i);
    for (int r = 1; r < g_size; ++r) expected[i] = fold(expected[i], input(r, i));
  }
  const std::size_t bytes = mine.size() * sizeof(T);
  Buffer send(send_memory(placement), bytes);
  Buffer recv(recv_memory(placement), bytes);
  put(in_place ? recv : send, mine);
  const void* sendbuf = in_place ? MPI_IN_PLACE : send.data();
  if (nonblocking) {
    MPI_Request request;
    MPI_Iallreduce(sendbuf, recv.data(), count, type, op, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    MPI_Allreduce(sendbuf, recv.data(), count, type, op, MPI_COMM_WORLD);
  }
  CHECK_TRUE(same(expected, get<T>(recv, mine.size())), "reduced values");
  if (!in_place) CHECK_TRUE(same(mine, get<T>(send, mine.size())), "send buffer unchanged");
}

template <typename T>
void arithmetic_ops(Placement placement, MPI_Datatype type, const char* type_name) {
  auto small = [](int rank, int i) { return static_cast<T>((rank * 7 + i * 3) % 5 + 1); };
  auto bits = [](int rank, int i) { return static_cast<T>((rank + i) % 4); };
  struct Op {
    MPI_Op op;
    const char* name;
    std::function<T(T, T)> fold;
    bool logical;
  };
  std::vector<Op> ops = {
      {MPI_SUM, "SUM", [](T a, T b) { return static_cast<T>(a + b); }, false},
      {MPI_PROD, "PROD", [](T a, T b) { return static_cast<T>(a * b); }, false},
      {MPI_MAX, "MAX", [](T a, T b) { return a > b ? a : b; }, false},
      {MPI_MIN, "MIN", [](T a, T b) { return a < b ? a : b; }, false},
  };
  if constexpr (std::is_integral_v<T>) {
    ops.push_back({MPI_LAND, "LAND", [](T a, T b) { return static_cast<T>(a && b); }, true});
    ops.push_back({MPI_LOR, "LOR", [](T a, T b) { return static_cast<T>(a || b); }, true});
    ops.push_back({MPI_LXOR, "LXOR", [](T a, T b) { return static_cast<T>(!a != !b); }, true});
    ops.push_back({MPI_BAND, "BAND", [](T a, T b) { return static_cast<T>(a & b); }, true});
    ops.push_back({MPI_BOR, "BOR", [](T a, T b) { return static_cast<T>(a | b); }, true});
    ops.push_back({MPI_BXOR, "BXOR", [](T a, T b) { return static_cast<T>(a ^ b); }, true});
  }
  for (const Op& op : ops) {
    const std::string label = std::string(type_name) + " " + op.name;
    std::function<T(int, int)> input =
        op.logical ? std::function<T(int, int)>(bits) : std::function<T(int, int)>(small);
    check_allreduce<T>(placement, type, op.op, label.c_str(), input, op.fold, 1000, false, false);
  }
  check_allreduce<T>(
      placement, type, MPI_SUM, (std::string(type_name) + " SUM").c_str(), small,
      [](T a, T b) { return static_cast<T>(a + b); }, 1000, true, false);
}

template <typename Pair>
void location_ops(Placement placement, MPI_Datatype type, const char* type_name) {
  auto input = [](int rank, int i) { return Pair{static_cast<decltype(Pair::value)>((rank * 5 + i) % 7), rank}; };
  auto maxloc = [](Pair a, Pair b) {
    if (a.value != b.value) return a.value > b.value ? a : b;
    return a.index < b.index ? a : b;
  };
  auto minloc = [](Pair a, Pair b) {
    if (a.value != b.value) return a.value < b.value ? a : b;
    return a.index < b.index ? a : b;
  };
  check_allreduce<Pair>(placement, type, MPI_MAXLOC, (std::string(type_name) + " MAXLOC").c_str(), input, maxloc, 500,
                        false, false);
  check_allreduce<Pair>(placement, type, MPI_MINLOC, (std::string(type_name) + " MINLOC").c_str(), input, minloc, 500,
                        true, false);
}

struct IntPair {
  int value;
  int index;
  bool operator==(const IntPair& o) const { return value == o.value && index == o.index; }
};
struct DoublePair {
  double value;
  int index;
  bool operator==(const DoublePair& o) const { return value == o.value && index == o.index; }
};

// A user-defined, commutative op: (a + b) mod 1000, elementwise. It runs on
// host copies of device data.
void modular_sum(void* in, void* inout, int* length, MPI_Datatype*) {
  const int* a = static_cast<const int*>(in);
  int* b = static_cast<int*>(inout);
  for (int i = 0; i < *length; ++i) b[i] = (a[i] + b[i]) % 1000;
}

void allreduce_suite(Placement placement) {
  arithmetic_ops<int>(placement, MPI_INT, "int");
  arithmetic_ops<signed char>(placement, MPI_SIGNED_CHAR, "signed char");
  arithmetic_ops<float>(placement, MPI_FLOAT, "float");
  arithmetic_ops<double>(placement, MPI_DOUBLE, "double");
  using Complex = std::complex<double>;
  auto complex_input = [](int rank, int i) { return Complex((rank + i) % 3 + 1, (rank * 2 + i) % 3 - 1); };
  check_allreduce<Complex>(
      placement, MPI_C_DOUBLE_COMPLEX, MPI_SUM, "double complex SUM", complex_input,
      [](Complex a, Complex b) { return a + b; }, 700, false, false);
  check_allreduce<Complex>(
      placement, MPI_C_DOUBLE_COMPLEX, MPI_PROD, "double complex PROD", complex_input,
      [](Complex a, Complex b) { return a * b; }, 700, false, false);
  location_ops<IntPair>(placement, MPI_2INT, "2int");
  location_ops<DoublePair>(placement, MPI_DOUBLE_INT, "double_int");
  MPI_Op user;
  MPI_Op_create(modular_sum, 1, &user);
  check_allreduce<int>(
      placement, MPI_INT, user, "user-defined modular sum",
      [](int rank, int i) { return (rank * 389 + i * 17) % 1000; }, [](int a, int b) { return (a + b) % 1000; }, 4096,
      false, false);
  MPI_Op_free(&user);
  // Large and nonblocking.
  auto value = [](int rank, int i) { return (rank + i) % 97; };
  auto sum = [](int a, int b) { return a + b; };
  check_allreduce<int>(placement, MPI_INT, MPI_SUM, "int SUM", value, sum, 1 << 20, false, false);
  check_allreduce<int>(placement, MPI_INT, MPI_SUM, "int SUM", value, sum, 1 << 18, false, true);
  check_allreduce<int>(placement, MPI_INT, MPI_SUM, "int SUM", value, sum, 1 << 18, true, true);
}

// ---- Every other collective ---------------------------------------------

int value_of(int rank, int block, int j) { return rank * 100000 + block * 1000 + j; }

// The blocking call, or the nonblocking one waited for.
template <typename Blocking, typename Nonblocking>
void call(bool nonblocking, Blocking blocking, Nonblocking start) {
  if (!nonblocking) {
    blocking();
    return;
  }
  MPI_Request request = MPI_REQUEST_NULL;
  start(&request);
  MPI_Wait(&request, MPI_STATUS_IGNORE);
}
const char* form(bool nonblocking) { return nonblocking ? " (nonblocking)" : ""; }

void bcast_and_reduce(Placement placement, int k, bool nonblocking) {
  const int root = g_size - 1;
  Checks::instance().set_context(format("Bcast %s k=%d%s", name(placement), k, nonblocking ? " (Ibcast)" : ""));
  std::vector<int> data(static_cast<std::size_t>(k));
  for (int j = 0; j < k; ++j) data[j] = value_of(root, 0, j);
  Buffer buffer(recv_memory(placement), data.size() * sizeof(int));
  put(buffer, g_rank == root ? data : std::vector<int>(data.size(), -1));
  if (nonblocking) {
    MPI_Request request;
    MPI_Ibcast(buffer.data(), k, MPI_INT, root, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    MPI_Bcast(buffer.data(), k, MPI_INT, root, MPI_COMM_WORLD);
  }
  CHECK_TRUE(same(data, get<int>(buffer, data.size())), "broadcast data");

  for (int in_place = 0; in_place < 2; ++in_place) {
    // In place at root 0: Debian 12's MPICH 4.0.2 crashes in its own
    // MPI_Reduce with MPI_IN_PLACE at another root for large counts.
    const int reduce_root = in_place ? 0 : 1 % g_size;
    Checks::instance().set_context(
        format("Reduce %s k=%d%s%s", name(placement), k, in_place ? " in place" : "", nonblocking ? " (Ireduce)" : ""));
    std::vector<int> mine(static_cast<std::size_t>(k));
    std::vector<int> expected(static_cast<std::size_t>(k), 0);
    for (int j = 0; j < k; ++j) {
      mine[j] = value_of(g_rank, 1, j);
      for (int r = 0; r < g_size; ++r) expected[j] += value_of(r, 1, j);
    }
    Buffer send(send_memory(placement), mine.size() * sizeof(int));
    Buffer recv(recv_memory(placement), mine.size() * sizeof(int));
    const bool root_in_place = in_place && g_rank == reduce_root;
    put(root_in_place ? recv : send, mine);
    if (!root_in_place) put(recv, std::vector<int>(mine.size(), -7));
    const void* sendbuf = root_in_place ? MPI_IN_PLACE : send.data();
    if (nonblocking) {
      MPI_Request request;
      MPI_Ireduce(sendbuf, recv.data(), k, MPI_INT, MPI_SUM, reduce_root, MPI_COMM_WORLD, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else {
      MPI_Reduce(sendbuf, recv.data(), k, MPI_INT, MPI_SUM, reduce_root, MPI_COMM_WORLD);
    }
    if (g_rank == reduce_root) {
      CHECK_TRUE(same(expected, get<int>(recv, mine.size())), "reduced at the root");
    } else {
      CHECK_TRUE(same(std::vector<int>(mine.size(), -7), get<int>(recv, mine.size())),
                 "a non-root receive buffer is untouched");
    }
  }
}

void gathers(Placement placement, int k, bool nonblocking) {
  const std::size_t total = static_cast<std::size_t>(k) * g_size;
  for (int in_place = 0; in_place < 2; ++in_place) {
    Checks::instance().set_context(format("Allgather %s k=%d%s%s", name(placement), k, in_place ? " in place" : "",
                                          nonblocking ? " (Iallgather)" : ""));
    std::vector<int> mine(static_cast<std::size_t>(k));
    std::vector<int> expected(total);
    for (int r = 0; r < g_size; ++r) {
      for (int j = 0; j < k; ++j) expected[static_cast<std::size_t>(r * k + j)] = value_of(r, 2, j);
    }
    for (int j = 0; j < k; ++j) mine[j] = value_of(g_rank, 2, j);
    Buffer send(send_memory(placement), mine.size() * sizeof(int));
    Buffer recv(recv_memory(placement), total * sizeof(int));
    put(send, mine);
    std::vector<int> initial(total, -1);
    if (in_place) std::copy(mine.begin(), mine.end(), initial.begin() + static_cast<std::ptrdiff_t>(g_rank) * k);
    put(recv, initial);
    const void* sendbuf = in_place ? MPI_IN_PLACE : send.data();
    if (nonblocking) {
      MPI_Request request;
      MPI_Iallgather(sendbuf, k, MPI_INT, recv.data(), k, MPI_INT, MPI_COMM_WORLD, &request);
      MPI_Wait(&request, MPI_STATUS_IGNORE);
    } else {
      MPI_Allgather(sendbuf, k, MPI_INT, recv.data(), k, MPI_INT, MPI_COMM_WORLD);
    }
    CHECK_TRUE(same(expected, get<int>(recv, total)), "gathered blocks");

    Checks::instance().set_context(
        format("Gather %s k=%d%s%s", name(placement), k, in_place ? " in place" : "", form(nonblocking)));
    const int root = 0;
    const bool root_in_place = in_place && g_rank == root;
    put(recv, root_in_place ? initial : std::vector<int>(total, -1));
    const void* gathered = root_in_place ? MPI_IN_PLACE : send.data();
    call(
        nonblocking, [&] { MPI_Gather(gathered, k, MPI_INT, recv.data(), k, MPI_INT, root, MPI_COMM_WORLD); },
        [&](MPI_Request* r) { MPI_Igather(gathered, k, MPI_INT, recv.data(), k, MPI_INT, root, MPI_COMM_WORLD, r); });
    if (g_rank == root) CHECK_TRUE(same(expected, get<int>(recv, total)), "gathered at the root");
  }
}

// Block r holds r + 1 ints and sits after a gap of 2 ints: gaps keep -1.
void v_layout(std::vector<int>& counts, std::vector<int>& displs, std::size_t* span) {
  counts.resize(static_cast<std::size_t>(g_size));
  displs.resize(static_cast<std::size_t>(g_size));
  int next = 2;
  for (int r = 0; r < g_size; ++r) {
    counts[r] = r + 1;
    displs[r] = next;
    next += counts[r] + 2;
  }
  *span = static_cast<std::size_t>(next);
}

void v_collectives(Placement placement, bool nonblocking) {
  std::vector<int> counts;
  std::vector<int> displs;
  std::size_t span = 0;
  v_layout(counts, displs, &span);
  std::vector<int> expected(span, -1);
  for (int r = 0; r < g_size; ++r) {
    for (int j = 0; j < counts[r]; ++j) expected[static_cast<std::size_t>(displs[r] + j)] = value_of(r, 3, j);
  }
  std::vector<int> mine(static_cast<std::size_t>(counts[g_rank]));
  for (int j = 0; j < counts[g_rank]; ++j) mine[j] = value_of(g_rank, 3, j);
  Buffer send(send_memory(placement), mine.size() * sizeof(int));
  Buffer recv(recv_memory(placement), span * sizeof(int));
  put(send, mine);

  Checks::instance().set_context(format("Allgatherv %s%s", name(placement), form(nonblocking)));
  put(recv, std::vector<int>(span, -1));
  call(
      nonblocking,
      [&] {
        MPI_Allgatherv(send.data(), counts[g_rank], MPI_INT, recv.data(), counts.data(), displs.data(), MPI_INT,
                       MPI_COMM_WORLD);
      },
      [&](MPI_Request* r) {
        MPI_Iallgatherv(send.data(), counts[g_rank], MPI_INT, recv.data(), counts.data(), displs.data(), MPI_INT,
                        MPI_COMM_WORLD, r);
      });
  CHECK_TRUE(same(expected, get<int>(recv, span)), "blocks in place, gaps untouched");

  Checks::instance().set_context(format("Gatherv %s%s", name(placement), form(nonblocking)));
  put(recv, std::vector<int>(span, -1));
  call(
      nonblocking,
      [&] {
        MPI_Gatherv(send.data(), counts[g_rank], MPI_INT, recv.data(), counts.data(), displs.data(), MPI_INT, 0,
                    MPI_COMM_WORLD);
      },
      [&](MPI_Request* r) {
        MPI_Igatherv(send.data(), counts[g_rank], MPI_INT, recv.data(), counts.data(), displs.data(), MPI_INT, 0,
                     MPI_COMM_WORLD, r);
      });
  if (g_rank == 0) CHECK_TRUE(same(expected, get<int>(recv, span)), "gathered blocks, gaps untouched");

  Checks::instance().set_context(format("Scatterv %s%s", name(placement), form(nonblocking)));
  Buffer whole(send_memory(placement), span * sizeof(int));
  put(whole, expected);
  Buffer part(recv_memory(placement), mine.size() * sizeof(int));
  call(
      nonblocking,
      [&] {
        MPI_Scatterv(whole.data(), counts.data(), displs.data(), MPI_INT, part.data(), counts[g_rank], MPI_INT, 0,
                     MPI_COMM_WORLD);
      },
      [&](MPI_Request* r) {
        MPI_Iscatterv(whole.data(), counts.data(), displs.data(), MPI_INT, part.data(), counts[g_rank], MPI_INT, 0,
                      MPI_COMM_WORLD, r);
      });
  CHECK_TRUE(same(mine, get<int>(part, mine.size())), "scattered block");

  Checks::instance().set_context(format("Scatter %s%s", name(placement), form(nonblocking)));
  const int k = 3;
  std::vector<int> blocks(static_cast<std::size_t>(k * g_size));
  for (int r = 0; r < g_size; ++r) {
    for (int j = 0; j < k; ++j) blocks[static_cast<std::size_t>(r * k + j)] = value_of(r, 4, j);
  }
  Buffer all(send_memory(placement), blocks.size() * sizeof(int));
  put(all, blocks);
  Buffer one(recv_memory(placement), k * sizeof(int));
  call(
      nonblocking, [&] { MPI_Scatter(all.data(), k, MPI_INT, one.data(), k, MPI_INT, 0, MPI_COMM_WORLD); },
      [&](MPI_Request* r) { MPI_Iscatter(all.data(), k, MPI_INT, one.data(), k, MPI_INT, 0, MPI_COMM_WORLD, r); });
  std::vector<int> my_block(blocks.begin() + g_rank * k, blocks.begin() + (g_rank + 1) * k);
  CHECK_TRUE(same(my_block, get<int>(one, k)), "scattered block");
  if (g_rank == 0) {
    Checks::instance().set_context(format("Scatter %s in place%s", name(placement), form(nonblocking)));
  }
  void* scattered = g_rank == 0 ? MPI_IN_PLACE : one.data();
  call(
      nonblocking, [&] { MPI_Scatter(all.data(), k, MPI_INT, scattered, k, MPI_INT, 0, MPI_COMM_WORLD); },
      [&](MPI_Request* r) { MPI_Iscatter(all.data(), k, MPI_INT, scattered, k, MPI_INT, 0, MPI_COMM_WORLD, r); });
  if (g_rank == 0) CHECK_TRUE(same(blocks, get<int>(all, blocks.size())), "root's buffer in place unchanged");
}

void all_to_all(Placement placement, int k, bool nonblocking) {
  Checks::instance().set_context(format("Alltoall %s k=%d%s", name(placement), k, nonblocking ? " (Ialltoall)" : ""));
  const std::size_t total = static_cast<std::size_t>(k) * g_size;
  std::vector<int> out(total);
  std::vector<int> expected(total);
  for (int q = 0; q < g_size; ++q) {
    for (int j = 0; j < k; ++j) {
      out[static_cast<std::size_t>(q * k + j)] = value_of(g_rank, q, j);
      expected[static_cast<std::size_t>(q * k + j)] = value_of(q, g_rank, j);
    }
  }
  Buffer send(send_memory(placement), total * sizeof(int));
  Buffer recv(recv_memory(placement), total * sizeof(int));
  put(send, out);
  if (nonblocking) {
    MPI_Request request;
    MPI_Ialltoall(send.data(), k, MPI_INT, recv.data(), k, MPI_INT, MPI_COMM_WORLD, &request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
  } else {
    MPI_Alltoall(send.data(), k, MPI_INT, recv.data(), k, MPI_INT, MPI_COMM_WORLD);
  }
  CHECK_TRUE(same(expected, get<int>(recv, total)), "exchanged blocks");

  Checks::instance().set_context(format("Alltoall %s k=%d in place%s", name(placement), k, form(nonblocking)));
  put(recv, out);
  call(
      nonblocking, [&] { MPI_Alltoall(MPI_IN_PLACE, k, MPI_INT, recv.data(), k, MPI_INT, MPI_COMM_WORLD); },
      [&](MPI_Request* r) { MPI_Ialltoall(MPI_IN_PLACE, k, MPI_INT, recv.data(), k, MPI_INT, MPI_COMM_WORLD, r); });
  CHECK_TRUE(same(expected, get<int>(recv, total)), "exchanged blocks in place");

  Checks::instance().set_context(format("Alltoallv %s k=%d%s", name(placement), k, form(nonblocking)));
  // Rank r sends q + 1 ints to rank q; gaps of one int between received blocks.
  std::vector<int> scounts(g_size), sdispls(g_size), rcounts(g_size), rdispls(g_size);
  int soffset = 0;
  int roffset = 1;
  for (int q = 0; q < g_size; ++q) {
    scounts[q] = q + 1;
    sdispls[q] = soffset;
    soffset += scounts[q];
    rcounts[q] = g_rank + 1;
    rdispls[q] = roffset;
    roffset += rcounts[q] + 1;
  }
  std::vector<int> vout(static_cast<std::size_t>(soffset));
  std::vector<int> vexpected(static_cast<std::size_t>(roffset), -1);
  for (int q = 0; q < g_size; ++q) {
    for (int j = 0; j < scounts[q]; ++j) vout[static_cast<std::size_t>(sdispls[q] + j)] = value_of(g_rank, q, j);
    for (int j = 0; j < rcounts[q]; ++j) vexpected[static_cast<std::size_t>(rdispls[q] + j)] = value_of(q, g_rank, j);
  }
  Buffer vsend(send_memory(placement), vout.size() * sizeof(int));
  Buffer vrecv(recv_memory(placement), vexpected.size() * sizeof(int));
  put(vsend, vout);
  put(vrecv, std::vector<int>(vexpected.size(), -1));
  call(
      nonblocking,
      [&] {
        MPI_Alltoallv(vsend.data(), scounts.data(), sdispls.data(), MPI_INT, vrecv.data(), rcounts.data(),
                      rdispls.data(), MPI_INT, MPI_COMM_WORLD);
      },
      [&](MPI_Request* r) {
        MPI_Ialltoallv(vsend.data(), scounts.data(), sdispls.data(), MPI_INT, vrecv.data(), rcounts.data(),
                       rdispls.data(), MPI_INT, MPI_COMM_WORLD, r);
      });
  CHECK_TRUE(same(vexpected, get<int>(vrecv, vexpected.size())), "v-exchanged blocks, gaps untouched");

  // Alltoallw: the same blocks, each peer's as its own type (q + 1 ints as
  // one contiguous type to rank q), at byte displacements.
  Checks::instance().set_context(format("Alltoallw %s k=%d%s", name(placement), k, form(nonblocking)));
  std::vector<MPI_Datatype> stypes(g_size), rtypes(g_size);
  std::vector<int> wscounts(g_size, 1), wrcounts(g_size, 1), wsdispls(g_size), wrdispls(g_size);
  for (int q = 0; q < g_size; ++q) {
    MPI_Type_contiguous(scounts[q], MPI_INT, &stypes[q]);
    MPI_Type_commit(&stypes[q]);
    rtypes[q] = MPI_INT;
    wrcounts[q] = rcounts[q];
    wsdispls[q] = sdispls[q] * static_cast<int>(sizeof(int));
    wrdispls[q] = rdispls[q] * static_cast<int>(sizeof(int));
  }
  put(vrecv, std::vector<int>(vexpected.size(), -1));
  call(
      nonblocking,
      [&] {
        MPI_Alltoallw(vsend.data(), wscounts.data(), wsdispls.data(), stypes.data(), vrecv.data(), wrcounts.data(),
                      wrdispls.data(), rtypes.data(), MPI_COMM_WORLD);
      },
      [&](MPI_Request* r) {
        MPI_Ialltoallw(vsend.data(), wscounts.data(), wsdispls.data(), stypes.data(), vrecv.data(), wrcounts.data(),
                       wrdispls.data(), rtypes.data(), MPI_COMM_WORLD, r);
      });
  CHECK_TRUE(same(vexpected, get<int>(vrecv, vexpected.size())), "w-exchanged blocks, gaps untouched");
  for (MPI_Datatype& type : stypes) MPI_Type_free(&type);
}

void scans_and_reduce_scatter(Placement placement, bool nonblocking) {
  const int k = 257;
  for (int in_place = 0; in_place < 2; ++in_place) {
    Checks::instance().set_context(
        format("Scan/Exscan %s%s%s", name(placement), in_place ? " in place" : "", form(nonblocking)));
    std::vector<int> mine(k);
    std::vector<int> inclusive(k, 0);
    std::vector<int> exclusive(k, 0);
    for (int j = 0; j < k; ++j) {
      mine[j] = value_of(g_rank, 5, j) % 1000;
      for (int r = 0; r <= g_rank; ++r) inclusive[j] += value_of(r, 5, j) % 1000;
      exclusive[j] = inclusive[j] - mine[j];
    }
    Buffer send(send_memory(placement), k * sizeof(int));
    Buffer recv(recv_memory(placement), k * sizeof(int));
    put(send, mine);
    put(recv, in_place ? mine : std::vector<int>(k, -3));
    const void* input = in_place ? MPI_IN_PLACE : send.data();
    call(
        nonblocking, [&] { MPI_Scan(input, recv.data(), k, MPI_INT, MPI_SUM, MPI_COMM_WORLD); },
        [&](MPI_Request* r) { MPI_Iscan(input, recv.data(), k, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r); });
    CHECK_TRUE(same(inclusive, get<int>(recv, k)), "inclusive scan");
    put(recv, in_place ? mine : std::vector<int>(k, -3));
    call(
        nonblocking, [&] { MPI_Exscan(input, recv.data(), k, MPI_INT, MPI_SUM, MPI_COMM_WORLD); },
        [&](MPI_Request* r) { MPI_Iexscan(input, recv.data(), k, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r); });
    if (g_rank == 0) {
      CHECK_TRUE(same(in_place ? mine : std::vector<int>(k, -3), get<int>(recv, k)),
                 "rank 0's exclusive scan buffer untouched");
    } else {
      CHECK_TRUE(same(exclusive, get<int>(recv, k)), "exclusive scan");
    }
  }
  for (int in_place = 0; in_place < 2; ++in_place) {
    Checks::instance().set_context(
        format("Reduce_scatter %s%s%s", name(placement), in_place ? " in place" : "", form(nonblocking)));
    std::vector<int> counts(g_size);
    int total = 0;
    int offset = 0;
    for (int r = 0; r < g_size; ++r) {
      counts[r] = r + 2;
      if (r < g_rank) offset += counts[r];
      total += counts[r];
    }
    std::vector<int> mine(static_cast<std::size_t>(total));
    for (int j = 0; j < total; ++j) mine[j] = value_of(g_rank, 6, j) % 1000;
    std::vector<int> expected(static_cast<std::size_t>(counts[g_rank]), 0);
    for (int j = 0; j < counts[g_rank]; ++j) {
      for (int r = 0; r < g_size; ++r) expected[j] += value_of(r, 6, offset + j) % 1000;
    }
    Buffer send(send_memory(placement), mine.size() * sizeof(int));
    Buffer recv(recv_memory(placement), mine.size() * sizeof(int));
    put(send, mine);
    if (in_place) {
      put(recv, mine);
    } else {
      put(recv, std::vector<int>(mine.size(), -1));
    }
    const void* operand = in_place ? MPI_IN_PLACE : send.data();
    call(
        nonblocking, [&] { MPI_Reduce_scatter(operand, recv.data(), counts.data(), MPI_INT, MPI_SUM, MPI_COMM_WORLD); },
        [&](MPI_Request* r) {
          MPI_Ireduce_scatter(operand, recv.data(), counts.data(), MPI_INT, MPI_SUM, MPI_COMM_WORLD, r);
        });
    CHECK_TRUE(same(expected, get<int>(recv, expected.size())), "reduced block");

    Checks::instance().set_context(
        format("Reduce_scatter_block %s%s%s", name(placement), in_place ? " in place" : "", form(nonblocking)));
    const int block = 5;
    std::vector<int> input(static_cast<std::size_t>(block * g_size));
    for (int j = 0; j < block * g_size; ++j) input[j] = value_of(g_rank, 7, j) % 1000;
    std::vector<int> reduced(block, 0);
    for (int j = 0; j < block; ++j) {
      for (int r = 0; r < g_size; ++r) reduced[j] += value_of(r, 7, g_rank * block + j) % 1000;
    }
    Buffer bsend(send_memory(placement), input.size() * sizeof(int));
    Buffer brecv(recv_memory(placement), input.size() * sizeof(int));
    put(bsend, input);
    put(brecv, in_place ? input : std::vector<int>(input.size(), -1));
    const void* block_input = in_place ? MPI_IN_PLACE : bsend.data();
    call(
        nonblocking,
        [&] { MPI_Reduce_scatter_block(block_input, brecv.data(), block, MPI_INT, MPI_SUM, MPI_COMM_WORLD); },
        [&](MPI_Request* r) {
          MPI_Ireduce_scatter_block(block_input, brecv.data(), block, MPI_INT, MPI_SUM, MPI_COMM_WORLD, r);
        });
    CHECK_TRUE(same(reduced, get<int>(brecv, block)), "reduced block");
  }
}

// ---- Reduce_local and the neighbourhood collectives ---------------------

void reduce_local(Placement placement) {
  Checks::instance().set_context(format("Reduce_local %s", name(placement)));
  const int k = 1000;
  std::vector<int> in(k), inout(k), sum(k), maximum(k);
  for (int j = 0; j < k; ++j) {
    in[j] = value_of(g_rank, 8, j) % 997;
    inout[j] = (j * 7) % 991;
    sum[j] = in[j] + inout[j];
    maximum[j] = std::max(in[j], sum[j]);
  }
  Buffer input(send_memory(placement), k * sizeof(int));
  Buffer output(recv_memory(placement), k * sizeof(int));
  put(input, in);
  put(output, inout);
  MPI_Reduce_local(input.data(), output.data(), k, MPI_INT, MPI_SUM);
  CHECK_TRUE(same(sum, get<int>(output, k)), "inout = in + inout");
  MPI_Reduce_local(input.data(), output.data(), k, MPI_INT, MPI_MAX);
  CHECK_TRUE(same(maximum, get<int>(output, k)), "inout = max(in, inout)");
  CHECK_TRUE(same(in, get<int>(input, k)), "in untouched");
}

// Block b of the receive buffer, k ints after a gap of one int before each
// block: what the neighbour at `from` sent (value_of(from, tag, j)), or -1
// where there is no neighbour.
void expect_block(std::vector<int>& expected, int b, int k, int from, int tag) {
  for (int j = 0; j < k; ++j) {
    expected[static_cast<std::size_t>(1 + b * (k + 1) + j)] = from == MPI_PROC_NULL ? -1 : value_of(from, tag, j);
  }
}

// A line of ranks without wraparound: the end ranks have one neighbour, and
// the block of the missing one must stay untouched.
void neighbourhood_line(Placement placement, bool nonblocking) {
  MPI_Comm line;
  int dims[1] = {g_size};
  int periods[1] = {0};
  MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &line);
  int left = MPI_PROC_NULL;
  int right = MPI_PROC_NULL;
  MPI_Cart_shift(line, 0, 1, &left, &right);
  const int k = 300;
  const std::size_t span = 2 * (k + 1);
  const std::vector<int> counts = {k, k};
  const std::vector<int> gapped = {1, k + 2};  // displacements with a gap before each block
  const std::vector<int> packed = {0, k};
  Buffer recv(recv_memory(placement), span * sizeof(int));

  // Allgather(v): the same block to both neighbours.
  std::vector<int> mine(k);
  for (int j = 0; j < k; ++j) mine[j] = value_of(g_rank, 9, j);
  Buffer one(send_memory(placement), k * sizeof(int));
  put(one, mine);
  std::vector<int> expected(span, -1);
  expect_block(expected, 0, k, left, 9);
  expect_block(expected, 1, k, right, 9);
  Checks::instance().set_context(format("Neighbor_allgatherv line %s%s", name(placement), form(nonblocking)));
  put(recv, std::vector<int>(span, -1));
  call(
      nonblocking,
      [&] {
        MPI_Neighbor_allgatherv(one.data(), k, MPI_INT, recv.data(), counts.data(), gapped.data(), MPI_INT, line);
      },
      [&](MPI_Request* r) {
        MPI_Ineighbor_allgatherv(one.data(), k, MPI_INT, recv.data(), counts.data(), gapped.data(), MPI_INT, line, r);
      });
  CHECK_TRUE(same(expected, get<int>(recv, span)), "blocks from both neighbours, gaps and missing ones untouched");
  Checks::instance().set_context(format("Neighbor_allgather line %s%s", name(placement), form(nonblocking)));
  // Without gaps: the blocks packed from the second int on.
  put(recv, std::vector<int>(span, -1));
  call(
      nonblocking, [&] { MPI_Neighbor_allgather(one.data(), k, MPI_INT, recv.as<int>() + 1, k, MPI_INT, line); },
      [&](MPI_Request* r) {
        MPI_Ineighbor_allgather(one.data(), k, MPI_INT, recv.as<int>() + 1, k, MPI_INT, line, r);
      });
  std::vector<int> packed_expected(span, -1);
  for (int j = 0; j < k; ++j) {
    packed_expected[static_cast<std::size_t>(1 + j)] = left == MPI_PROC_NULL ? -1 : value_of(left, 9, j);
    packed_expected[static_cast<std::size_t>(1 + k + j)] = right == MPI_PROC_NULL ? -1 : value_of(right, 9, j);
  }
  CHECK_TRUE(same(packed_expected, get<int>(recv, span)), "blocks from both neighbours, missing ones untouched");

  // Alltoall(v,w): block 0 goes left, block 1 right; block 0 comes from the
  // left neighbour's block 1.
  std::vector<int> out(2 * k);
  for (int j = 0; j < k; ++j) {
    out[static_cast<std::size_t>(j)] = value_of(g_rank, 10, j);
    out[static_cast<std::size_t>(k + j)] = value_of(g_rank, 11, j);
  }
  Buffer two(send_memory(placement), out.size() * sizeof(int));
  put(two, out);
  expected.assign(span, -1);
  expect_block(expected, 0, k, left, 11);
  expect_block(expected, 1, k, right, 10);
  Checks::instance().set_context(format("Neighbor_alltoall line %s%s", name(placement), form(nonblocking)));
  put(recv, std::vector<int>(span, -1));
  std::vector<int> exchanged_expected(span, -1);
  for (int j = 0; j < k; ++j) {
    exchanged_expected[static_cast<std::size_t>(1 + j)] = left == MPI_PROC_NULL ? -1 : value_of(left, 11, j);
    exchanged_expected[static_cast<std::size_t>(1 + k + j)] = right == MPI_PROC_NULL ? -1 : value_of(right, 10, j);
  }
  call(
      nonblocking, [&] { MPI_Neighbor_alltoall(two.data(), k, MPI_INT, recv.as<int>() + 1, k, MPI_INT, line); },
      [&](MPI_Request* r) { MPI_Ineighbor_alltoall(two.data(), k, MPI_INT, recv.as<int>() + 1, k, MPI_INT, line, r); });
  CHECK_TRUE(same(exchanged_expected, get<int>(recv, span)), "exchanged blocks, missing ones untouched");
  Checks::instance().set_context(format("Neighbor_alltoallv line %s%s", name(placement), form(nonblocking)));
  put(recv, std::vector<int>(span, -1));
  call(
      nonblocking,
      [&] {
        MPI_Neighbor_alltoallv(two.data(), counts.data(), packed.data(), MPI_INT, recv.data(), counts.data(),
                               gapped.data(), MPI_INT, line);
      },
      [&](MPI_Request* r) {
        MPI_Ineighbor_alltoallv(two.data(), counts.data(), packed.data(), MPI_INT, recv.data(), counts.data(),
                                gapped.data(), MPI_INT, line, r);
      });
  CHECK_TRUE(same(expected, get<int>(recv, span)), "exchanged blocks, gaps and missing ones untouched");
  Checks::instance().set_context(format("Neighbor_alltoallw line %s%s", name(placement), form(nonblocking)));
  MPI_Datatype block_type;
  MPI_Type_contiguous(k, MPI_INT, &block_type);
  MPI_Type_commit(&block_type);
  const std::vector<int> ones = {1, 1};
  const std::vector<MPI_Datatype> send_types = {block_type, block_type};
  const std::vector<MPI_Datatype> receive_types = {MPI_INT, MPI_INT};
  const std::vector<MPI_Aint> send_bytes = {0, static_cast<MPI_Aint>(k * sizeof(int))};
  const std::vector<MPI_Aint> receive_bytes = {static_cast<MPI_Aint>(sizeof(int)),
                                               static_cast<MPI_Aint>((k + 2) * sizeof(int))};
  put(recv, std::vector<int>(span, -1));
  call(
      nonblocking,
      [&] {
        MPI_Neighbor_alltoallw(two.data(), ones.data(), send_bytes.data(), send_types.data(), recv.data(),
                               counts.data(), receive_bytes.data(), receive_types.data(), line);
      },
      [&](MPI_Request* r) {
        MPI_Ineighbor_alltoallw(two.data(), ones.data(), send_bytes.data(), send_types.data(), recv.data(),
                                counts.data(), receive_bytes.data(), receive_types.data(), line, r);
      });
  CHECK_TRUE(same(expected, get<int>(recv, span)), "w-exchanged blocks, gaps and missing ones untouched");
  MPI_Type_free(&block_type);
  MPI_Comm_free(&line);
}

// A distributed graph where every other rank sends to rank 0: in- and
// out-degrees differ, and differ between ranks.
void neighbourhood_star(Placement placement, bool nonblocking) {
  Checks::instance().set_context(format("Neighbor_alltoall star %s%s", name(placement), form(nonblocking)));
  std::vector<int> sources;
  std::vector<int> destinations;
  if (g_rank == 0) {
    for (int r = 1; r < g_size; ++r) sources.push_back(r);
  } else {
    destinations.push_back(0);
  }
  MPI_Comm star;
  MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, static_cast<int>(sources.size()), sources.data(), MPI_UNWEIGHTED,
                                 static_cast<int>(destinations.size()), destinations.data(), MPI_UNWEIGHTED,
                                 MPI_INFO_NULL, 0, &star);
  const int k = 500;
  std::vector<int> out(k);
  for (int j = 0; j < k; ++j) out[j] = value_of(g_rank, 12, j);
  const std::size_t received = static_cast<std::size_t>(k) * sources.size();
  Buffer send(send_memory(placement), out.size() * sizeof(int));
  Buffer recv(recv_memory(placement), (received + 1) * sizeof(int));
  put(send, out);
  put(recv, std::vector<int>(received + 1, -1));
  call(
      nonblocking, [&] { MPI_Neighbor_alltoall(send.data(), k, MPI_INT, recv.data(), k, MPI_INT, star); },
      [&](MPI_Request* r) { MPI_Ineighbor_alltoall(send.data(), k, MPI_INT, recv.data(), k, MPI_INT, star, r); });
  std::vector<int> expected(received + 1, -1);
  for (std::size_t i = 0; i < sources.size(); ++i) {
    for (int j = 0; j < k; ++j) expected[i * k + static_cast<std::size_t>(j)] = value_of(sources[i], 12, j);
  }
  CHECK_TRUE(same(expected, get<int>(recv, received + 1)), "one block from each source, the int after untouched");
  MPI_Comm_free(&star);
}

}  // namespace

int main(int argc, char** argv) {
  const Options options = parse_options(argc, argv);
  if (options.uses_device()) init_device_before_mpi();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  std::vector<Placement> placements = {Placement::all_host};
  if (options.uses_device()) placements = {Placement::all_host, Placement::all_device, Placement::mixed};
  for (Placement placement : placements) {
    allreduce_suite(placement);
    for (int k : {1, 5, 65536}) {
      bcast_and_reduce(placement, k, false);
      gathers(placement, k, false);
      all_to_all(placement, k, false);
    }
    for (bool nonblocking : {false, true}) {
      v_collectives(placement, nonblocking);
      scans_and_reduce_scatter(placement, nonblocking);
      neighbourhood_line(placement, nonblocking);
      neighbourhood_star(placement, nonblocking);
    }
    bcast_and_reduce(placement, 1000, true);
    gathers(placement, 1000, true);
    all_to_all(placement, 1000, true);
    reduce_local(placement);
  }
  Checks::instance().set_context("end");
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
