// OSU-style benchmark: one-way latency (ping-pong / 2) and windowed
// bandwidth between ranks 0 and 1 for host->host, device->device,
// device->host and host->device, and Allreduce latency on host and device
// buffers. On CUDA memory it also measures the raw floors in the same run
// (one device-to-device copy through a CUDA IPC mapping, pinned
// device<->host copies) and checks the speed goals against them. Prints a
// table; --csv FILE writes the same rows as CSV.
//
//   mpirun -np 2 -x LD_PRELOAD=libcumpi.so cumpi_bench [--pairs hh,dd,dh,hd]
//       [--min BYTES] [--max BYTES] [--factor F] [--iterations N] [--allreduce 0|1]
//       [--floors 0|1] [--csv FILE] [--cuda-context 0|1]
//
// With CUMPI_TRANSPORTS=staged in the environment the goals checked are the
// staged pipeline's.
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <cuda_runtime.h>

#include "common/test_memory.h"

using cumpi_test::Buffer;
using cumpi_test::Memory;

namespace {

struct Settings {
  std::vector<std::string> pairs{"hh", "dd", "dh", "hd"};
  std::size_t min_bytes = 8;
  std::size_t max_bytes = 64u << 20;
  long iterations = 0;  // 0: scaled with the size
  std::size_t factor = 2;
  bool allreduce = true;
  bool floors = true;
  bool cuda_context = false;
  std::string csv;
};

Settings parse(int argc, char** argv) {
  Settings settings;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--pairs") {
      settings.pairs.clear();
      for (std::size_t at = 0; at < value.size(); at += 3) settings.pairs.push_back(value.substr(at, 2));
    } else if (flag == "--min") {
      settings.min_bytes = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--max") {
      settings.max_bytes = std::strtoull(value.c_str(), nullptr, 10);
    } else if (flag == "--iterations") {
      settings.iterations = std::atol(value.c_str());
    } else if (flag == "--factor") {
      settings.factor = std::max<std::size_t>(2, std::strtoull(value.c_str(), nullptr, 10));
    } else if (flag == "--floors") {
      settings.floors = value != "0";
    } else if (flag == "--allreduce") {
      settings.allreduce = value != "0";
    } else if (flag == "--csv") {
      settings.csv = value;
    } else if (flag == "--cuda-context") {
      settings.cuda_context = value != "0";
    }
  }
  return settings;
}

// min, min * factor, ... and max itself, so that the largest size asked for is measured.
std::vector<std::size_t> sweep(std::size_t min, std::size_t max, std::size_t factor) {
  std::vector<std::size_t> sizes;
  for (std::size_t bytes = min; bytes <= max; bytes *= factor) sizes.push_back(bytes);
  if (sizes.empty() || sizes.back() != max) sizes.push_back(max);
  return sizes;
}

Memory memory_of(char letter) { return letter == 'd' ? Memory::device : Memory::host; }

long iterations_for(const Settings& settings, std::size_t bytes) {
  if (settings.iterations > 0) return settings.iterations;
  const std::size_t budget = 512u << 20;  // bytes moved per measurement, about
  return std::max<long>(20, std::min<long>(2000, static_cast<long>(budget / std::max<std::size_t>(bytes, 1))));
}

struct Row {
  std::string test;
  std::string pair;
  std::size_t bytes;
  long iterations;
  double latency_us;
  double bandwidth_gbs;
};

// One-way latency: half the round trip of `iterations` ping-pongs, after a
// tenth as many to warm up (pools, pinning, connections).
double ping_pong(Buffer& buffer, std::size_t bytes, long iterations, int rank) {
  const int count = static_cast<int>(bytes);
  const int peer = 1 - rank;
  auto round_trips = [&](long n) {
    for (long i = 0; i < n; ++i) {
      if (rank == 0) {
        MPI_Send(buffer.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
        MPI_Recv(buffer.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      } else {
        MPI_Recv(buffer.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), count, MPI_BYTE, peer, 1, MPI_COMM_WORLD);
      }
    }
  };
  round_trips(std::max<long>(2, iterations / 10));
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  round_trips(iterations);
  return (MPI_Wtime() - start) / iterations / 2;
}

// A window of nonblocking sends, one acknowledgement per window. Sets
// *posting_us to the time one Isend or Irecv takes to post, on average.
double bandwidth(Buffer& buffer, std::size_t bytes, long iterations, int rank, double* posting_us) {
  const int count = static_cast<int>(bytes);
  const int window = bytes >= (4u << 20) ? 4 : 32;
  const long rounds = std::max<long>(2, iterations / window);
  std::vector<MPI_Request> requests(static_cast<std::size_t>(window));
  double start = 0;
  double posting = 0;
  for (long round = -1; round < rounds; ++round) {
    if (round == 0) {
      MPI_Barrier(MPI_COMM_WORLD);
      start = MPI_Wtime();
      posting = 0;
    }
    const double posted_from = MPI_Wtime();
    for (int w = 0; w < window; ++w) {
      if (rank == 0) {
        MPI_Isend(buffer.data(), count, MPI_BYTE, 1, 2, MPI_COMM_WORLD, &requests[w]);
      } else {
        MPI_Irecv(buffer.data(), count, MPI_BYTE, 0, 2, MPI_COMM_WORLD, &requests[w]);
      }
    }
    posting += MPI_Wtime() - posted_from;
    MPI_Waitall(window, requests.data(), MPI_STATUSES_IGNORE);
    if (rank == 0) {
      MPI_Recv(nullptr, 0, MPI_BYTE, 1, 3, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Send(nullptr, 0, MPI_BYTE, 0, 3, MPI_COMM_WORLD);
    }
  }
  const double seconds = MPI_Wtime() - start;
  *posting_us = posting / static_cast<double>(window * rounds) * 1e6;
  return static_cast<double>(bytes) * window * rounds / seconds / 1e9;
}

double allreduce_latency(Memory memory, std::size_t bytes, long iterations) {
  const int count = static_cast<int>(bytes / sizeof(float));
  Buffer send(memory, bytes);
  Buffer recv(memory, bytes);
  std::vector<float> ones(static_cast<std::size_t>(count), 1.0f);
  send.upload(ones.data(), bytes);
  for (long warm = 0; warm < std::max<long>(2, iterations / 10); ++warm) {
    MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (long i = 0; i < iterations; ++i) {
    MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  }
  return (MPI_Wtime() - start) / iterations;
}

bool ok(cudaError_t error, const char* call) {
  if (error != cudaSuccess) std::fprintf(stderr, "bench: %s failed: %s\n", call, cudaGetErrorString(error));
  return error == cudaSuccess;
}

// Seconds per copy of `bytes` from `from` to `to` (cudaMemcpyAsync and a
// stream synchronisation each), the best of three batches.
double copy_seconds(void* to, const void* from, std::size_t bytes, long iterations, cudaStream_t stream) {
  double best = 1e30;
  for (int batch = 0; batch < 3; ++batch) {
    const double start = MPI_Wtime();
    for (long i = 0; i < iterations; ++i) {
      cudaMemcpyAsync(to, from, bytes, cudaMemcpyDefault, stream);
      cudaStreamSynchronize(stream);
    }
    best = std::min(best, (MPI_Wtime() - start) / iterations);
  }
  return best;
}

// A zero-byte exchange with `peer`: a barrier of two.
void sync_with(int peer) {
  MPI_Sendrecv(nullptr, 0, MPI_BYTE, peer, 82, nullptr, 0, MPI_BYTE, peer, 82, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

// The floors of a one-way message in a ping-pong between two processes that
// share a GPU, where each turn's copy runs in the other process's context
// than the last one: a turn is one IPC copy from the peer's buffer (what a
// pull costs), or a device-to-host copy, a host message and a host-to-device
// copy in the peer (what an eager message costs). A zero-byte host message
// passes the turn. Half the round trip, the best of three batches.
void measure_ping_pong_floors(void* device, void* mapped, void* pinned, int rank, cudaStream_t stream,
                              std::vector<Row>* rows) {
  constexpr std::size_t kBytes = 8;
  constexpr long kIterations = 1000;
  const int peer = 1 - rank;
  auto batch = [&](bool eager) {
    sync_with(peer);
    const double start = MPI_Wtime();
    for (long i = 0; i < kIterations; ++i) {
      for (int turn = 0; turn < 2; ++turn) {
        if (turn != rank) {
          MPI_Recv(pinned, eager ? kBytes : 0, MPI_BYTE, peer, 79, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          if (eager) cudaMemcpyAsync(device, pinned, kBytes, cudaMemcpyHostToDevice, stream);
          if (eager) cudaStreamSynchronize(stream);
          continue;
        }
        if (eager) {
          cudaMemcpyAsync(pinned, device, kBytes, cudaMemcpyDeviceToHost, stream);
        } else {
          cudaMemcpyAsync(device, mapped, kBytes, cudaMemcpyDeviceToDevice, stream);
        }
        cudaStreamSynchronize(stream);
        MPI_Send(pinned, eager ? kBytes : 0, MPI_BYTE, peer, 79, MPI_COMM_WORLD);
      }
    }
    return (MPI_Wtime() - start) / kIterations / 2;
  };
  for (bool eager : {false, true}) {
    double best = 1e30;
    for (int repeat = 0; repeat < 3; ++repeat) best = std::min(best, batch(eager));
    if (rank == 0) {
      rows->push_back({"floor", eager ? "pp_eager" : "pp_ipc", kBytes, kIterations, best * 1e6, kBytes / best / 1e9});
    }
  }
}

// Ranks 0 and 1 map each other's buffer and measure the ping-pong floors;
// either skips them when the other cannot.
void measure_ping_pong_between_contexts(void* device, std::size_t bytes, int rank, cudaStream_t stream,
                                        std::vector<Row>* rows) {
  const int peer = 1 - rank;
  cudaIpcMemHandle_t mine{};
  cudaIpcMemHandle_t theirs{};
  void* pinned = nullptr;
  void* mapped = nullptr;
  int ready = ok(cudaIpcGetMemHandle(&mine, device), "cudaIpcGetMemHandle") &&
              ok(cudaMallocHost(&pinned, bytes), "cudaMallocHost");
  MPI_Sendrecv(&mine, sizeof(mine), MPI_BYTE, peer, 80, &theirs, sizeof(theirs), MPI_BYTE, peer, 80,
               MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  ready = ready && ok(cudaIpcOpenMemHandle(&mapped, theirs, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle");
  int both_ready = 0;
  MPI_Sendrecv(&ready, 1, MPI_INT, peer, 81, &both_ready, 1, MPI_INT, peer, 81, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (ready && both_ready) measure_ping_pong_floors(device, mapped, pinned, rank, stream, rows);
  sync_with(peer);
  if (mapped != nullptr) cudaIpcCloseMemHandle(mapped);
  if (pinned != nullptr) cudaFreeHost(pinned);
}

// Seconds per copy of a window of `window` copies of `bytes` through the
// mapping, issued back to back (batched: in one cudaMemcpyBatchAsync) and
// synchronised once: what a window of pulls costs at best. Copies go to
// distinct offsets where the buffer has room. The best of three.
double window_copy_seconds(void* to, const void* from, std::size_t room, std::size_t bytes, int window,
                           bool batched, cudaStream_t stream) {
  std::vector<void*> destinations;
  std::vector<const void*> sources;
  std::vector<std::size_t> sizes(static_cast<std::size_t>(window), bytes);
  for (int i = 0; i < window; ++i) {
    const std::size_t offset = room >= bytes * window ? bytes * static_cast<std::size_t>(i) : 0;
    destinations.push_back(static_cast<char*>(to) + offset);
    sources.push_back(static_cast<const char*>(from) + offset);
  }
  cudaMemcpyAttributes attributes{};
  attributes.srcAccessOrder = cudaMemcpySrcAccessOrderStream;
  std::size_t first_index = 0;
  double best = 1e30;
  for (int batch = 0; batch < 4; ++batch) {  // the first warms up
    const double start = MPI_Wtime();
    for (int round = 0; round < 20; ++round) {
      if (batched) {
        if (!ok(cudaMemcpyBatchAsync(destinations.data(), sources.data(), sizes.data(), sizes.size(), &attributes,
                                     &first_index, 1, stream),
                "cudaMemcpyBatchAsync")) {
          return 0;
        }
      } else {
        for (int i = 0; i < window; ++i) cudaMemcpyAsync(destinations[i], sources[i], bytes, cudaMemcpyDefault, stream);
      }
      cudaStreamSynchronize(stream);
    }
    if (batch > 0) best = std::min(best, (MPI_Wtime() - start) / 20 / window);
  }
  return best;
}

// With two or more GPUs visible: cudaMemcpyPeer from the next GPU into this
// rank's, the floor for ranks on distinct GPUs.
void measure_peer_copy_floor(void* device, std::size_t largest, cudaStream_t stream, std::vector<Row>* rows) {
  int devices = 0;
  int mine = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices < 2 || cudaGetDevice(&mine) != cudaSuccess) return;
  const int other = (mine + 1) % devices;
  void* remote = nullptr;
  cudaSetDevice(other);
  const bool allocated = ok(cudaMalloc(&remote, largest), "cudaMalloc on the peer GPU");
  cudaSetDevice(mine);
  if (!allocated) return;
  for (std::size_t bytes : {std::size_t{1} << 20, std::size_t{16} << 20, largest}) {
    if (bytes > largest) continue;
    double best = 1e30;
    for (int batch = 0; batch < 3; ++batch) {
      const double start = MPI_Wtime();
      for (int i = 0; i < 20; ++i) {
        cudaMemcpyPeerAsync(device, mine, remote, other, bytes, stream);
        cudaStreamSynchronize(stream);
      }
      best = std::min(best, (MPI_Wtime() - start) / 20);
    }
    rows->push_back({"floor", "peer", bytes, 20, best * 1e6, bytes / best / 1e9});
  }
  cudaSetDevice(other);
  cudaFree(remote);
  cudaSetDevice(mine);
}

// The raw floors, measured here and now: rank 1 copies from rank 0's buffer
// through a CUDA IPC mapping; rank 0 copies between its buffer and pinned
// host memory; then both in turn, as a ping-pong does.
void measure_floors(std::size_t max_bytes, int rank, std::vector<Row>* rows) {
  const std::vector<std::size_t> sizes = {8, 1u << 20, std::max<std::size_t>(max_bytes, 1u << 20)};
  const std::size_t largest = sizes.back();
  void* device = nullptr;
  cudaStream_t stream = nullptr;
  bool ready = ok(cudaMalloc(&device, largest), "cudaMalloc") && ok(cudaStreamCreate(&stream), "cudaStreamCreate");
  cudaIpcMemHandle_t handle{};
  if (rank == 0 && ready) ready = ok(cudaIpcGetMemHandle(&handle, device), "cudaIpcGetMemHandle");
  MPI_Bcast(&handle, sizeof(handle), MPI_BYTE, 0, MPI_COMM_WORLD);
  if (rank == 1 && ready) {
    void* mapped = nullptr;
    if (ok(cudaIpcOpenMemHandle(&mapped, handle, cudaIpcMemLazyEnablePeerAccess), "cudaIpcOpenMemHandle")) {
      for (std::size_t bytes : sizes) {
        const long iterations = bytes <= (1u << 20) ? 2000 : 20;
        const double seconds = copy_seconds(device, mapped, bytes, iterations, stream);
        rows->push_back({"floor", "ipc", bytes, iterations, seconds * 1e6, bytes / seconds / 1e9});
      }
      constexpr int kWindow = 32;
      for (bool batched : {false, true}) {
        const double seconds = window_copy_seconds(device, mapped, largest, 1u << 20, kWindow, batched, stream);
        if (seconds > 0) {
          rows->push_back({"floor", batched ? "ipc_batch" : "ipc_b2b", 1u << 20, 20 * kWindow, seconds * 1e6,
                           (1u << 20) / seconds / 1e9});
        }
      }
      cudaIpcCloseMemHandle(mapped);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 0 && ready) {
    void* pinned = nullptr;
    if (ok(cudaMallocHost(&pinned, largest), "cudaMallocHost")) {
      for (std::size_t bytes : {std::size_t{8}, std::size_t{2} << 20, largest}) {
        const long iterations = bytes <= (2u << 20) ? 1000 : 20;
        const double d2h = copy_seconds(pinned, device, bytes, iterations, stream);
        const double h2d = copy_seconds(device, pinned, bytes, iterations, stream);
        rows->push_back({"floor", "d2h", bytes, iterations, d2h * 1e6, bytes / d2h / 1e9});
        rows->push_back({"floor", "h2d", bytes, iterations, h2d * 1e6, bytes / h2d / 1e9});
      }
      cudaFreeHost(pinned);
    }
    measure_peer_copy_floor(device, largest, stream, rows);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank <= 1 && ready) measure_ping_pong_between_contexts(device, largest, rank, stream, rows);
  MPI_Barrier(MPI_COMM_WORLD);
  if (stream != nullptr) cudaStreamDestroy(stream);
  cudaFree(device);
}

// Rank 0's rows and the other ranks' floors (the IPC floor is rank 1's).
std::vector<Row> gather_rows(const std::vector<Row>& mine, int rank, int size) {
  std::vector<Row> all = mine;
  for (int peer = 1; peer < size; ++peer) {
    if (rank == peer) {
      std::vector<Row> floors;
      for (const Row& row : mine) {
        if (row.test == "floor") floors.push_back(row);
      }
      int count = static_cast<int>(floors.size());
      MPI_Send(&count, 1, MPI_INT, 0, 77, MPI_COMM_WORLD);
      for (const Row& row : floors) {
        char text[256];
        std::snprintf(text, sizeof(text), "%s %s %zu %ld %.6f %.6f", row.test.c_str(), row.pair.c_str(), row.bytes,
                      row.iterations, row.latency_us, row.bandwidth_gbs);
        MPI_Send(text, sizeof(text), MPI_CHAR, 0, 78, MPI_COMM_WORLD);
      }
    } else if (rank == 0) {
      int count = 0;
      MPI_Recv(&count, 1, MPI_INT, peer, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      for (int i = 0; i < count; ++i) {
        char text[256];
        char test[64];
        char pair[64];
        Row row;
        MPI_Recv(text, sizeof(text), MPI_CHAR, peer, 78, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        std::sscanf(text, "%63s %63s %zu %ld %lf %lf", test, pair, &row.bytes, &row.iterations, &row.latency_us,
                    &row.bandwidth_gbs);
        row.test = test;
        row.pair = pair;
        all.push_back(row);
      }
    }
  }
  return all;
}

const Row* find_row(const std::vector<Row>& rows, const char* test, const char* pair, std::size_t bytes) {
  for (const Row& row : rows) {
    if (row.test == test && row.pair == pair && row.bytes == bytes) return &row;
  }
  return nullptr;
}

void print_goal(const char* goal, double measured, const char* unit, double target, bool at_least) {
  const bool met = at_least ? measured >= target : measured <= target;
  std::printf("goal  %-58s %12.3f %-5s target %s %10.3f  %s\n", goal, measured, unit, at_least ? ">=" : "<=",
              target, met ? "met" : "MISSED");
}

// The speed goals, each against the floors of this same run.
void check_goals(const std::vector<Row>& rows, std::size_t largest) {
  const char* transports = std::getenv("CUMPI_TRANSPORTS");
  const bool staged_only = transports != nullptr && std::string(transports) == "staged";
  std::printf("--- speed goals (%s)\n", staged_only ? "CUMPI_TRANSPORTS=staged" : "default transports");
  const Row* dd_small = find_row(rows, "p2p", "dd", 8);
  const Row* dd_mib = find_row(rows, "p2p", "dd", 1u << 20);
  const Row* dd_large = find_row(rows, "p2p", "dd", largest);
  const Row* ipc_small = find_row(rows, "floor", "ipc", 8);
  const Row* ipc_large = find_row(rows, "floor", "ipc", largest);
  const Row* d2h = find_row(rows, "floor", "d2h", largest);
  const Row* h2d = find_row(rows, "floor", "h2d", largest);
  const Row* hh_large = find_row(rows, "p2p", "hh", largest);
  if (!staged_only) {
    if (dd_small != nullptr) print_goal("8 B D->D one-way latency", dd_small->latency_us, "us", 12.0, false);
    if (dd_small != nullptr && ipc_small != nullptr) {
      print_goal("8 B D->D latency / single IPC copy floor", dd_small->latency_us / ipc_small->latency_us, "x", 1.25,
                 false);
    }
    // Two processes on one GPU alternate contexts at every turn of a
    // ping-pong; these floors include that switch, the isolated copy does not.
    const Row* pp_ipc = find_row(rows, "floor", "pp_ipc", 8);
    const Row* pp_eager = find_row(rows, "floor", "pp_eager", 8);
    if (dd_small != nullptr && pp_ipc != nullptr) {
      print_goal("8 B D->D latency / ping-pong IPC copy floor", dd_small->latency_us / pp_ipc->latency_us, "x", 1.25,
                 false);
    }
    if (dd_small != nullptr && pp_eager != nullptr) {
      print_goal("8 B D->D latency / ping-pong eager floor", dd_small->latency_us / pp_eager->latency_us, "x", 1.25,
                 false);
    }
    if (dd_large != nullptr && ipc_large != nullptr) {
      print_goal("largest D->D bandwidth / raw IPC copy", dd_large->bandwidth_gbs / ipc_large->bandwidth_gbs, "x",
                 0.93, true);
    }
    if (dd_mib != nullptr) print_goal("1 MiB D->D bandwidth", dd_mib->bandwidth_gbs, "GB/s", 200.0, true);
    // Ranks on distinct GPUs: against cudaMemcpyPeer at each size it has.
    for (const Row& peer : rows) {
      const Row* dd = peer.test == "floor" && peer.pair == "peer" ? find_row(rows, "p2p", "dd", peer.bytes) : nullptr;
      if (dd == nullptr) continue;
      char goal[96];
      std::snprintf(goal, sizeof(goal), "%zu B D->D bandwidth / cudaMemcpyPeer", peer.bytes);
      print_goal(goal, dd->bandwidth_gbs / peer.bandwidth_gbs, "x", 0.9, true);
    }
  } else if (dd_large != nullptr && d2h != nullptr && h2d != nullptr && hh_large != nullptr) {
    const double slowest = std::min({d2h->bandwidth_gbs, h2d->bandwidth_gbs, hh_large->bandwidth_gbs});
    print_goal("largest D->D pipeline bandwidth / slowest stage", dd_large->bandwidth_gbs / slowest, "x", 0.8, true);
  }
  // A cliff is a latency jump the size does not explain: only steps to
  // latency-bound sizes count (where moving the bytes at the best bandwidth
  // seen would take less than half the latency); beyond them a doubled size
  // doubles the time, as it must.
  double best_bandwidth = 0;
  for (const Row& row : rows) {
    if (row.test == "p2p" && row.pair == "dd") best_bandwidth = std::max(best_bandwidth, row.bandwidth_gbs);
  }
  double cliff = 0;
  std::size_t cliff_at = 0;
  const Row* previous = nullptr;
  for (const Row& row : rows) {
    if (row.test != "p2p" || row.pair != "dd") continue;
    const double transfer_us = best_bandwidth > 0 ? static_cast<double>(row.bytes) / (best_bandwidth * 1e3) : 0;
    const bool latency_bound = transfer_us < 0.5 * row.latency_us;
    if (previous != nullptr && latency_bound && row.latency_us / previous->latency_us > cliff) {
      cliff = row.latency_us / previous->latency_us;
      cliff_at = row.bytes;
    }
    previous = &row;
  }
  if (cliff_at != 0) {
    char goal[96];
    std::snprintf(goal, sizeof(goal), "largest D->D latency step, latency-bound sizes (to %zu B)", cliff_at);
    print_goal(goal, cliff, "x", 2.0, false);
  }
}

void print_rows(const std::vector<Row>& rows, const std::string& csv) {
  std::printf("%-10s %-5s %12s %10s %14s %14s\n", "test", "pair", "bytes", "iters", "latency_us", "GB/s");
  for (const Row& row : rows) {
    std::printf("%-10s %-5s %12zu %10ld %14.3f %14.3f\n", row.test.c_str(), row.pair.c_str(), row.bytes,
                row.iterations, row.latency_us, row.bandwidth_gbs);
  }
  std::fflush(stdout);
  if (csv.empty()) return;
  FILE* file = std::fopen(csv.c_str(), "w");
  if (file == nullptr) {
    std::fprintf(stderr, "cannot write %s\n", csv.c_str());
    return;
  }
  std::fprintf(file, "test,pair,bytes,iterations,latency_us,bandwidth_GBps\n");
  for (const Row& row : rows) {
    std::fprintf(file, "%s,%s,%zu,%ld,%.4f,%.4f\n", row.test.c_str(), row.pair.c_str(), row.bytes, row.iterations,
                 row.latency_us, row.bandwidth_gbs);
  }
  std::fclose(file);
}

}  // namespace

int main(int argc, char** argv) {
  const Settings settings = parse(argc, argv);
  bool needs_device = settings.cuda_context;
  for (const std::string& pair : settings.pairs) needs_device = needs_device || pair.find('d') != std::string::npos;
  if (needs_device) cumpi_test::init_device_before_mpi();
  MPI_Init(&argc, &argv);
  int rank = 0;
  int size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  std::vector<Row> rows;
  for (const std::string& pair : settings.pairs) {
    if (rank > 1) break;
    const Memory memory = memory_of(rank == 0 ? pair[0] : pair[1]);
    for (std::size_t bytes : sweep(settings.min_bytes, settings.max_bytes, settings.factor)) {
      Buffer buffer(memory, bytes);
      std::vector<unsigned char> fill(bytes, 1);
      buffer.fill(fill);
      const long iterations = iterations_for(settings, bytes);
      const double latency = ping_pong(buffer, bytes, iterations, rank);
      double posting_us = 0;
      const double rate = bandwidth(buffer, bytes, iterations, rank, &posting_us);
      rows.push_back({"p2p", pair, bytes, iterations, latency * 1e6, rate});
      // Progress, in case the run is cut short, with each side's cost of
      // posting one nonblocking operation of the window.
      double peer_posting_us = 0;
      MPI_Sendrecv(&posting_us, 1, MPI_DOUBLE, 1 - rank, 83, &peer_posting_us, 1, MPI_DOUBLE, 1 - rank, 83,
                   MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      if (rank == 0) {
        std::fprintf(stderr, "measured p2p %s %zu B: %.3f us, %.3f GB/s (posting: Isend %.2f us, Irecv %.2f us)\n",
                     pair.c_str(), bytes, latency * 1e6, rate, posting_us, peer_posting_us);
      }
    }
  }
  if (settings.allreduce) {
    for (const char* pair : {"hh", "dd"}) {
      for (std::size_t bytes : sweep(std::max<std::size_t>(settings.min_bytes, 8), settings.max_bytes, 16)) {
        const long iterations = iterations_for(settings, bytes);
        const double latency = allreduce_latency(memory_of(pair[0]), bytes, iterations);
        rows.push_back({"allreduce", pair, bytes, iterations, latency * 1e6,
                        static_cast<double>(bytes) / latency / 1e9});
      }
    }
  }
  const bool floors = settings.floors && needs_device && std::string(cumpi_test::device_backend()) == "cuda" &&
                      size >= 2;
  if (floors) measure_floors(settings.max_bytes, rank, &rows);
  rows = gather_rows(rows, rank, size);
  if (rank == 0) {
    print_rows(rows, settings.csv);
    if (floors) check_goals(rows, settings.max_bytes);
  }
  MPI_Finalize();
  return 0;
}
