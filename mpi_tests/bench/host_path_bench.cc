// Host-buffer cases of the benchmark, on 2 ranks: what cumpi must
// leave at plain MPI's speed. Prints one row per measurement,
//   host <case> <bytes> <metric> <value>
// with metric latency_us (one way), bandwidth_gbs or post_ns. Run it with
// and without cumpi preloaded; host_path_compare.py alternates the runs and
// prints the ratios.
//
//   host_path_bench [--min B] [--max B] [--factor F] [--cases a,b,...] [--seconds S]
//                   [--cuda-context 0|1] [--device-in-flight 0|1]
//
// Cases: pingpong (MPI_Send/MPI_Recv), sendrecv, window_distinct and
// window_shared (16 MPI_Isend/MPI_Irecv into distinct buffers or one, then
// MPI_Waitall; the receiver's posting cost is reported as irecv_post),
// persistent (MPI_Send_init/MPI_Recv_init windows with MPI_Startall),
// allreduce, bcast, alltoall (8 B, 64 KiB and 16 MiB per rank).
// --device-in-flight 1 keeps a device receive pending on both ranks for the
// whole run (matched at the end), as in a GPU code with device traffic in
// flight beside host traffic; it needs device memory (cumpi's emulation or
// CUDA).
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "common/test_memory.h"

using cumpi_test::Buffer;
using cumpi_test::Memory;

namespace {

constexpr int kWindow = 16;

struct Settings {
  std::size_t min_bytes = 8;
  std::size_t max_bytes = 64u << 20;
  std::size_t factor = 4;
  double seconds = 0.05;  // per measurement, about
  std::vector<std::string> cases{"pingpong", "sendrecv", "window_distinct", "window_shared", "persistent",
                                 "allreduce", "bcast", "alltoall"};
  bool cuda_context = false;
  bool device_in_flight = false;
};

Settings parse(int argc, char** argv) {
  Settings settings;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const std::string value = argv[i + 1];
    if (flag == "--min") settings.min_bytes = std::strtoull(value.c_str(), nullptr, 10);
    if (flag == "--max") settings.max_bytes = std::strtoull(value.c_str(), nullptr, 10);
    if (flag == "--factor") settings.factor = std::max<std::size_t>(2, std::strtoull(value.c_str(), nullptr, 10));
    if (flag == "--seconds") settings.seconds = std::atof(value.c_str());
    if (flag == "--cuda-context") settings.cuda_context = value != "0";
    if (flag == "--device-in-flight") settings.device_in_flight = value != "0";
    if (flag == "--cases") {
      settings.cases.clear();
      std::size_t at = 0;
      while (at <= value.size()) {
        const std::size_t comma = std::min(value.find(',', at), value.size());
        settings.cases.push_back(value.substr(at, comma - at));
        at = comma + 1;
      }
    }
  }
  return settings;
}

bool wants(const Settings& settings, const char* name) {
  return std::find(settings.cases.begin(), settings.cases.end(), name) != settings.cases.end();
}

int g_rank = 0;

void row(const char* name, std::size_t bytes, const char* metric, double value) {
  if (g_rank == 0) std::printf("host %-16s %10zu %-14s %.6g\n", name, bytes, metric, value);
}

// Repetitions for about `seconds` of a step taking `step_seconds`: the same
// on both ranks (rank 0 decides).
long repetitions(double seconds, double step_seconds) {
  long n = static_cast<long>(seconds / std::max(step_seconds, 1e-9));
  n = std::max(3L, std::min(n, 2000000L));
  MPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return n;
}

// Times `step` (run `n` times) after a tenth as many to warm up; returns
// seconds per step on rank 0's clock.
template <typename Step>
double timed(long n, Step step) {
  for (long i = 0; i < std::max(1L, n / 10); ++i) step();
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (long i = 0; i < n; ++i) step();
  return (MPI_Wtime() - start) / static_cast<double>(n);
}

// A first short run sizes the real one.
template <typename Step>
double measure(const Settings& settings, Step step) {
  const double probe = timed(3, step);
  return timed(repetitions(settings.seconds, probe), step);
}

void pingpong(const Settings& settings, std::size_t bytes, std::vector<char>& buffer) {
  const int count = static_cast<int>(bytes);
  const double round_trip = measure(settings, [&] {
    if (g_rank == 0) {
      MPI_Send(buffer.data(), count, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(buffer.data(), count, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(buffer.data(), count, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(buffer.data(), count, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
  });
  row("pingpong", bytes, "latency_us", round_trip / 2 * 1e6);
}

void sendrecv(const Settings& settings, std::size_t bytes, std::vector<char>& out, std::vector<char>& in) {
  const int count = static_cast<int>(bytes);
  const int peer = 1 - g_rank;
  const double exchange = measure(settings, [&] {
    MPI_Sendrecv(out.data(), count, MPI_BYTE, peer, 2, in.data(), count, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  });
  row("sendrecv", bytes, "latency_us", exchange * 1e6);
}

// A window of kWindow nonblocking messages 0 -> 1 and an acknowledgement.
void window(const Settings& settings, std::size_t bytes, bool shared, std::vector<std::vector<char>>& buffers) {
  const int count = static_cast<int>(bytes);
  std::vector<MPI_Request> requests(kWindow);
  double posting = 0;
  long windows = 0;
  const double per_window = measure(settings, [&] {
    const double posted_from = MPI_Wtime();
    for (int w = 0; w < kWindow; ++w) {
      char* data = buffers[shared ? 0 : static_cast<std::size_t>(w)].data();
      if (g_rank == 0) {
        MPI_Isend(data, count, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &requests[w]);
      } else {
        MPI_Irecv(data, count, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &requests[w]);
      }
    }
    posting += MPI_Wtime() - posted_from;
    ++windows;
    MPI_Waitall(kWindow, requests.data(), MPI_STATUSES_IGNORE);
    if (g_rank == 0) {
      MPI_Recv(nullptr, 0, MPI_BYTE, 1, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Send(nullptr, 0, MPI_BYTE, 0, 4, MPI_COMM_WORLD);
    }
  });
  const char* name = shared ? "window_shared" : "window_distinct";
  row(name, bytes, "bandwidth_gbs", static_cast<double>(bytes) * kWindow / per_window / 1e9);
  // The receiver's cost of posting one MPI_Irecv, sent to rank 0 to print.
  double post_ns = posting / static_cast<double>(windows * kWindow) * 1e9;
  if (g_rank == 1) MPI_Send(&post_ns, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD);
  if (g_rank == 0) MPI_Recv(&post_ns, 1, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  row(shared ? "irecv_post_shared" : "irecv_post", bytes, "post_ns", post_ns);
}

void persistent(const Settings& settings, std::size_t bytes, std::vector<std::vector<char>>& buffers) {
  const int count = static_cast<int>(bytes);
  std::vector<MPI_Request> requests(kWindow);
  for (int w = 0; w < kWindow; ++w) {
    char* data = buffers[static_cast<std::size_t>(w)].data();
    if (g_rank == 0) {
      MPI_Send_init(data, count, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &requests[w]);
    } else {
      MPI_Recv_init(data, count, MPI_BYTE, 0, 6, MPI_COMM_WORLD, &requests[w]);
    }
  }
  const double per_window = measure(settings, [&] {
    MPI_Startall(kWindow, requests.data());
    MPI_Waitall(kWindow, requests.data(), MPI_STATUSES_IGNORE);
    if (g_rank == 0) {
      MPI_Recv(nullptr, 0, MPI_BYTE, 1, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      MPI_Send(nullptr, 0, MPI_BYTE, 0, 7, MPI_COMM_WORLD);
    }
  });
  for (MPI_Request& request : requests) MPI_Request_free(&request);
  row("persistent", bytes, "bandwidth_gbs", static_cast<double>(bytes) * kWindow / per_window / 1e9);
}

void collectives(const Settings& settings) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (const std::size_t bytes : {std::size_t{8}, std::size_t{64} << 10, std::size_t{16} << 20}) {
    const int floats = static_cast<int>(bytes / sizeof(float));
    std::vector<float> send(static_cast<std::size_t>(floats) * static_cast<std::size_t>(size), 1.0f);
    std::vector<float> receive(send.size());
    if (wants(settings, "allreduce")) {
      const double t = measure(settings, [&] {
        MPI_Allreduce(send.data(), receive.data(), floats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
      });
      row("allreduce", bytes, "latency_us", t * 1e6);
    }
    if (wants(settings, "bcast")) {
      const double t = measure(settings, [&] { MPI_Bcast(send.data(), floats, MPI_FLOAT, 0, MPI_COMM_WORLD); });
      row("bcast", bytes, "latency_us", t * 1e6);
    }
    if (wants(settings, "alltoall")) {
      const double t = measure(settings, [&] {
        MPI_Alltoall(send.data(), floats, MPI_FLOAT, receive.data(), floats, MPI_FLOAT, MPI_COMM_WORLD);
      });
      row("alltoall", bytes, "latency_us", t * 1e6);
    }
  }
}

// A device receive pending on every rank for the whole run, on a
// communicator of its own; each rank's peer sends its message at the end.
class DeviceInFlight {
 public:
  explicit DeviceInFlight(bool on) : on_(on) {
    if (!on_) return;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    int size = 0;
    MPI_Comm_size(comm_, &size);
    from_ = (g_rank + size - 1) % size;
    to_ = (g_rank + 1) % size;
    in_ = std::make_unique<Buffer>(Memory::device, kBytes);
    out_ = std::make_unique<Buffer>(Memory::device, kBytes);
    MPI_Irecv(in_->data(), kBytes, MPI_BYTE, from_, 77, comm_, &request_);
  }
  ~DeviceInFlight() {
    if (!on_) return;
    MPI_Send(out_->data(), kBytes, MPI_BYTE, to_, 77, comm_);
    MPI_Wait(&request_, MPI_STATUS_IGNORE);
    MPI_Comm_free(&comm_);
  }
  DeviceInFlight(const DeviceInFlight&) = delete;
  DeviceInFlight& operator=(const DeviceInFlight&) = delete;

 private:
  static constexpr int kBytes = 1 << 16;
  bool on_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int from_ = 0;
  int to_ = 0;
  std::unique_ptr<Buffer> in_;
  std::unique_ptr<Buffer> out_;
  MPI_Request request_ = MPI_REQUEST_NULL;
};

}  // namespace

int main(int argc, char** argv) {
  const Settings settings = parse(argc, argv);
  if (settings.cuda_context || settings.device_in_flight) cumpi_test::init_device_before_mpi();
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size != 2) {
    if (g_rank == 0) std::fprintf(stderr, "host_path_bench: run it on 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  if (g_rank == 0) {
    std::printf("# host_path_bench: %d ranks, cuda context %d, device request in flight %d, window %d\n", size,
                settings.cuda_context ? 1 : 0, settings.device_in_flight ? 1 : 0, kWindow);
  }
  {
    const DeviceInFlight device(settings.device_in_flight);
    std::vector<std::size_t> sizes;
    for (std::size_t bytes = settings.min_bytes; bytes <= settings.max_bytes; bytes *= settings.factor) {
      sizes.push_back(bytes);
    }
    if (sizes.empty() || sizes.back() != settings.max_bytes) sizes.push_back(settings.max_bytes);
    for (const std::size_t bytes : sizes) {
      std::vector<std::vector<char>> buffers(kWindow, std::vector<char>(bytes, 1));
      std::vector<char> other(bytes, 2);
      if (wants(settings, "pingpong")) pingpong(settings, bytes, buffers[0]);
      if (wants(settings, "sendrecv")) sendrecv(settings, bytes, buffers[0], other);
      if (wants(settings, "window_distinct")) window(settings, bytes, false, buffers);
      if (wants(settings, "window_shared")) window(settings, bytes, true, buffers);
      if (wants(settings, "persistent")) persistent(settings, bytes, buffers);
    }
    collectives(settings);
  }
  MPI_Finalize();
  return 0;
}
