// Collectives on every mix of host and device buffers: every predefined op
// on int, float, double, signed char and double complex, MAXLOC/MINLOC on
// pair types, a user-defined op, MPI_IN_PLACE, the rooted and v-variants
// (whose gaps must stay untouched) and the nonblocking forms. Expected values
// are computed on each rank from the formula every rank's input follows.
#include <mpi.h>

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
                     std::function<T(int rank, int i)> input, std::function<T(T, T)> fold, int count,
                     bool in_place, bool nonblocking) {
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
    std::function<T(int, int)> input = op.logical ? std::function<T(int, int)>(bits) : std::function<T(int, int)>(small);
    check_allreduce<T>(placement, type, op.op, label.c_str(), input, op.fold, 1000, false, false);
  }
  check_allreduce<T>(placement, type, MPI_SUM, (std::string(type_name) + " SUM").c_str(), small,
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
  check_allreduce<Pair>(placement, type, MPI_MAXLOC, (std::string(type_name) + " MAXLOC").c_str(), input, maxloc,
                        500, false, false);
  check_allreduce<Pair>(placement, type, MPI_MINLOC, (std::string(type_name) + " MINLOC").c_str(), input, minloc,
                        500, true, false);
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
  check_allreduce<Complex>(placement, MPI_C_DOUBLE_COMPLEX, MPI_SUM, "double complex SUM", complex_input,
                           [](Complex a, Complex b) { return a + b; }, 700, false, false);
  check_allreduce<Complex>(placement, MPI_C_DOUBLE_COMPLEX, MPI_PROD, "double complex PROD", complex_input,
                           [](Complex a, Complex b) { return a * b; }, 700, false, false);
  location_ops<IntPair>(placement, MPI_2INT, "2int");
  location_ops<DoublePair>(placement, MPI_DOUBLE_INT, "double_int");
  MPI_Op user;
  MPI_Op_create(modular_sum, 1, &user);
  check_allreduce<int>(placement, MPI_INT, user, "user-defined modular sum",
                       [](int rank, int i) { return (rank * 389 + i * 17) % 1000; },
                       [](int a, int b) { return (a + b) % 1000; }, 4096, false, false);
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
    Checks::instance().set_context(format("Reduce %s k=%d%s%s", name(placement), k, in_place ? " in place" : "",
                                          nonblocking ? " (Ireduce)" : ""));
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

    if (nonblocking) continue;
    Checks::instance().set_context(format("Gather %s k=%d%s", name(placement), k, in_place ? " in place" : ""));
    const int root = 0;
    const bool root_in_place = in_place && g_rank == root;
    put(recv, root_in_place ? initial : std::vector<int>(total, -1));
    MPI_Gather(root_in_place ? MPI_IN_PLACE : send.data(), k, MPI_INT, recv.data(), k, MPI_INT, root,
               MPI_COMM_WORLD);
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

void v_collectives(Placement placement) {
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

  Checks::instance().set_context(format("Allgatherv %s", name(placement)));
  put(recv, std::vector<int>(span, -1));
  MPI_Allgatherv(send.data(), counts[g_rank], MPI_INT, recv.data(), counts.data(), displs.data(), MPI_INT,
                 MPI_COMM_WORLD);
  CHECK_TRUE(same(expected, get<int>(recv, span)), "blocks in place, gaps untouched");

  Checks::instance().set_context(format("Gatherv %s", name(placement)));
  put(recv, std::vector<int>(span, -1));
  MPI_Gatherv(send.data(), counts[g_rank], MPI_INT, recv.data(), counts.data(), displs.data(), MPI_INT, 0,
              MPI_COMM_WORLD);
  if (g_rank == 0) CHECK_TRUE(same(expected, get<int>(recv, span)), "gathered blocks, gaps untouched");

  Checks::instance().set_context(format("Scatterv %s", name(placement)));
  Buffer whole(send_memory(placement), span * sizeof(int));
  put(whole, expected);
  Buffer part(recv_memory(placement), mine.size() * sizeof(int));
  MPI_Scatterv(whole.data(), counts.data(), displs.data(), MPI_INT, part.data(), counts[g_rank], MPI_INT, 0,
               MPI_COMM_WORLD);
  CHECK_TRUE(same(mine, get<int>(part, mine.size())), "scattered block");

  Checks::instance().set_context(format("Scatter %s", name(placement)));
  const int k = 3;
  std::vector<int> blocks(static_cast<std::size_t>(k * g_size));
  for (int r = 0; r < g_size; ++r) {
    for (int j = 0; j < k; ++j) blocks[static_cast<std::size_t>(r * k + j)] = value_of(r, 4, j);
  }
  Buffer all(send_memory(placement), blocks.size() * sizeof(int));
  put(all, blocks);
  Buffer one(recv_memory(placement), k * sizeof(int));
  MPI_Scatter(all.data(), k, MPI_INT, one.data(), k, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> my_block(blocks.begin() + g_rank * k, blocks.begin() + (g_rank + 1) * k);
  CHECK_TRUE(same(my_block, get<int>(one, k)), "scattered block");
  if (g_rank == 0) {
    Checks::instance().set_context(format("Scatter %s in place", name(placement)));
  }
  MPI_Scatter(all.data(), k, MPI_INT, g_rank == 0 ? MPI_IN_PLACE : one.data(), k, MPI_INT, 0, MPI_COMM_WORLD);
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
  if (nonblocking) return;

  Checks::instance().set_context(format("Alltoall %s k=%d in place", name(placement), k));
  put(recv, out);
  MPI_Alltoall(MPI_IN_PLACE, k, MPI_INT, recv.data(), k, MPI_INT, MPI_COMM_WORLD);
  CHECK_TRUE(same(expected, get<int>(recv, total)), "exchanged blocks in place");

  Checks::instance().set_context(format("Alltoallv %s", name(placement)));
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
  MPI_Alltoallv(vsend.data(), scounts.data(), sdispls.data(), MPI_INT, vrecv.data(), rcounts.data(), rdispls.data(),
                MPI_INT, MPI_COMM_WORLD);
  CHECK_TRUE(same(vexpected, get<int>(vrecv, vexpected.size())), "v-exchanged blocks, gaps untouched");
}

void scans_and_reduce_scatter(Placement placement) {
  const int k = 257;
  for (int in_place = 0; in_place < 2; ++in_place) {
    Checks::instance().set_context(format("Scan/Exscan %s%s", name(placement), in_place ? " in place" : ""));
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
    MPI_Scan(in_place ? MPI_IN_PLACE : send.data(), recv.data(), k, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_TRUE(same(inclusive, get<int>(recv, k)), "inclusive scan");
    put(recv, in_place ? mine : std::vector<int>(k, -3));
    MPI_Exscan(in_place ? MPI_IN_PLACE : send.data(), recv.data(), k, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (g_rank == 0) {
      CHECK_TRUE(same(in_place ? mine : std::vector<int>(k, -3), get<int>(recv, k)),
                 "rank 0's exclusive scan buffer untouched");
    } else {
      CHECK_TRUE(same(exclusive, get<int>(recv, k)), "exclusive scan");
    }
  }
  for (int in_place = 0; in_place < 2; ++in_place) {
    Checks::instance().set_context(format("Reduce_scatter %s%s", name(placement), in_place ? " in place" : ""));
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
    MPI_Reduce_scatter(in_place ? MPI_IN_PLACE : send.data(), recv.data(), counts.data(), MPI_INT, MPI_SUM,
                       MPI_COMM_WORLD);
    CHECK_TRUE(same(expected, get<int>(recv, expected.size())), "reduced block");

    Checks::instance().set_context(format("Reduce_scatter_block %s%s", name(placement), in_place ? " in place" : ""));
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
    MPI_Reduce_scatter_block(in_place ? MPI_IN_PLACE : bsend.data(), brecv.data(), block, MPI_INT, MPI_SUM,
                             MPI_COMM_WORLD);
    CHECK_TRUE(same(reduced, get<int>(brecv, block)), "reduced block");
  }
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
    bcast_and_reduce(placement, 1000, true);
    gathers(placement, 1000, true);
    all_to_all(placement, 1000, true);
    v_collectives(placement);
    scans_and_reduce_scatter(placement);
  }
  Checks::instance().set_context("end");
  const int result = Checks::instance().finish();
  MPI_Finalize();
  return result;
}
