// Host-buffer cases of the benchmark, on 2 ranks: what cumpi must
// leave at plain MPI's speed. Prints one row per measurement,
//   host <case> <bytes> <metric> <value>
// with metric latency_us (one way), bandwidth_gbs or post_ns. Run it with
// and without cumpi preloaded; host_path_compare.py alternates the runs and
// prints the ratios.
//
// --pairs N measures plain MPI and cumpi in this one process instead: each
// measurement is made N times through the PMPI entry points (the MPI
// library's own, which cumpi does not interpose) and N times through the MPI
// ones (cumpi's when preloaded), alternating plain-cumpi, cumpi-plain, ...,
// and prints one row per pair,
//   pair <case> <bytes> <metric> <plain> <cumpi>
// The machine's drift between processes falls on both sides alike there;
// what it cannot show is a cost cumpi puts on the whole process rather than
// on each call, which the alternating runs do. Without cumpi preloaded both
// sides are plain MPI: the spread of their ratio is the method's own.
//
//   host_path_bench [--min B] [--max B] [--factor F] [--cases a,b,...] [--seconds S]
//                   [--pairs N] [--cuda-context 0|1] [--device-in-flight 0|1]
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
#include <dlfcn.h>
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
  int pairs = 0;          // 0: measure through MPI_* only
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
    if (flag == "--pairs") settings.pairs = std::max(0, std::atoi(value.c_str()));
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

// The MPI calls a measurement makes: either the MPI_* entry points (cumpi's
// when it is preloaded) or the PMPI_* ones (the library's own).
struct Api {
  decltype(&MPI_Send) send;
  decltype(&MPI_Recv) recv;
  decltype(&MPI_Sendrecv) sendrecv;
  decltype(&MPI_Isend) isend;
  decltype(&MPI_Irecv) irecv;
  decltype(&MPI_Waitall) waitall;
  decltype(&MPI_Send_init) send_init;
  decltype(&MPI_Recv_init) recv_init;
  decltype(&MPI_Startall) startall;
  decltype(&MPI_Request_free) request_free;
  decltype(&MPI_Allreduce) allreduce;
  decltype(&MPI_Bcast) bcast;
  decltype(&MPI_Alltoall) alltoall;
};

const Api kIntercepted{MPI_Send,      MPI_Recv,      MPI_Sendrecv, MPI_Isend,        MPI_Irecv,
                       MPI_Waitall,   MPI_Send_init, MPI_Recv_init, MPI_Startall,    MPI_Request_free,
                       MPI_Allreduce, MPI_Bcast,     MPI_Alltoall};
const Api kPlain{PMPI_Send,      PMPI_Recv,      PMPI_Sendrecv,  PMPI_Isend,        PMPI_Irecv,
                 PMPI_Waitall,   PMPI_Send_init, PMPI_Recv_init, PMPI_Startall,     PMPI_Request_free,
                 PMPI_Allreduce, PMPI_Bcast,     PMPI_Alltoall};

int g_rank = 0;

struct Figure {
  const char* name;
  const char* metric;
  double value;
};
using Figures = std::vector<Figure>;

// Repetitions for about `seconds` of a step taking `step_seconds`: the same
// on both ranks (rank 0 decides).
long repetitions(double seconds, double step_seconds) {
  long n = static_cast<long>(seconds / std::max(step_seconds, 1e-9));
  n = std::max(3L, std::min(n, 2000000L));
  PMPI_Bcast(&n, 1, MPI_LONG, 0, MPI_COMM_WORLD);
  return n;
}

// Times `step` (run `n` times) after a tenth as many to warm up; returns
// seconds per step on rank 0's clock.
template <typename Step>
double timed(long n, Step step) {
  for (long i = 0; i < std::max(1L, n / 10); ++i) step();
  PMPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  for (long i = 0; i < n; ++i) step();
  return (MPI_Wtime() - start) / static_cast<double>(n);
}

// Seconds per step; the first use sizes the repetitions for every later
// one, so that both sides of a pair run the same number of steps.
class Timer {
 public:
  explicit Timer(double seconds) : seconds_(seconds) {}
  template <typename Step>
  double per_step(Step step) {
    if (repetitions_ == 0) repetitions_ = repetitions(seconds_, timed(3, step));
    return timed(repetitions_, step);
  }

 private:
  double seconds_;
  long repetitions_ = 0;
};

Figures pingpong(const Api& api, Timer& timer, std::size_t bytes, std::vector<char>& buffer) {
  const int count = static_cast<int>(bytes);
  const double round_trip = timer.per_step([&] {
    if (g_rank == 0) {
      api.send(buffer.data(), count, MPI_BYTE, 1, 1, MPI_COMM_WORLD);
      api.recv(buffer.data(), count, MPI_BYTE, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else {
      api.recv(buffer.data(), count, MPI_BYTE, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      api.send(buffer.data(), count, MPI_BYTE, 0, 1, MPI_COMM_WORLD);
    }
  });
  return {{"pingpong", "latency_us", round_trip / 2 * 1e6}};
}

Figures sendrecv(const Api& api, Timer& timer, std::size_t bytes, std::vector<char>& out, std::vector<char>& in) {
  const int count = static_cast<int>(bytes);
  const int peer = 1 - g_rank;
  const double exchange = timer.per_step([&] {
    api.sendrecv(out.data(), count, MPI_BYTE, peer, 2, in.data(), count, MPI_BYTE, peer, 2, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
  });
  return {{"sendrecv", "latency_us", exchange * 1e6}};
}

// The window's closing acknowledgement 1 -> 0.
void acknowledge(const Api& api, int tag) {
  if (g_rank == 0) {
    api.recv(nullptr, 0, MPI_BYTE, 1, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  } else {
    api.send(nullptr, 0, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
  }
}

// A window of kWindow nonblocking messages 0 -> 1 and an acknowledgement.
Figures window(const Api& api, Timer& timer, std::size_t bytes, bool shared,
               std::vector<std::vector<char>>& buffers) {
  const int count = static_cast<int>(bytes);
  std::vector<MPI_Request> requests(kWindow);
  double posting = 0;
  long windows = 0;
  const double per_window = timer.per_step([&] {
    const double posted_from = MPI_Wtime();
    for (int w = 0; w < kWindow; ++w) {
      char* data = buffers[shared ? 0 : static_cast<std::size_t>(w)].data();
      if (g_rank == 0) {
        api.isend(data, count, MPI_BYTE, 1, 3, MPI_COMM_WORLD, &requests[w]);
      } else {
        api.irecv(data, count, MPI_BYTE, 0, 3, MPI_COMM_WORLD, &requests[w]);
      }
    }
    posting += MPI_Wtime() - posted_from;
    ++windows;
    api.waitall(kWindow, requests.data(), MPI_STATUSES_IGNORE);
    acknowledge(api, 4);
  });
  // The receiver's cost of posting one MPI_Irecv, sent to rank 0 to print.
  double post_ns = posting / static_cast<double>(windows * kWindow) * 1e9;
  if (g_rank == 1) PMPI_Send(&post_ns, 1, MPI_DOUBLE, 0, 5, MPI_COMM_WORLD);
  if (g_rank == 0) PMPI_Recv(&post_ns, 1, MPI_DOUBLE, 1, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  return {{shared ? "window_shared" : "window_distinct", "bandwidth_gbs",
           static_cast<double>(bytes) * kWindow / per_window / 1e9},
          {shared ? "irecv_post_shared" : "irecv_post", "post_ns", post_ns}};
}

Figures persistent(const Api& api, Timer& timer, std::size_t bytes, std::vector<std::vector<char>>& buffers) {
  const int count = static_cast<int>(bytes);
  std::vector<MPI_Request> requests(kWindow);
  for (int w = 0; w < kWindow; ++w) {
    char* data = buffers[static_cast<std::size_t>(w)].data();
    if (g_rank == 0) {
      api.send_init(data, count, MPI_BYTE, 1, 6, MPI_COMM_WORLD, &requests[w]);
    } else {
      api.recv_init(data, count, MPI_BYTE, 0, 6, MPI_COMM_WORLD, &requests[w]);
    }
  }
  const double per_window = timer.per_step([&] {
    api.startall(kWindow, requests.data());
    api.waitall(kWindow, requests.data(), MPI_STATUSES_IGNORE);
    acknowledge(api, 7);
  });
  for (MPI_Request& request : requests) api.request_free(&request);
  return {{"persistent", "bandwidth_gbs", static_cast<double>(bytes) * kWindow / per_window / 1e9}};
}

void print(const Figures& figures, std::size_t bytes) {
  if (g_rank != 0) return;
  for (const Figure& figure : figures) {
    std::printf("host %-16s %10zu %-14s %.6g\n", figure.name, bytes, figure.metric, figure.value);
  }
}

void print_pairs(const Figures& plain, const Figures& cumpi, std::size_t bytes) {
  if (g_rank != 0) return;
  for (std::size_t i = 0; i < plain.size(); ++i) {
    std::printf("pair %-16s %10zu %-14s %.6g %.6g\n", plain[i].name, bytes, plain[i].metric, plain[i].value,
                cumpi[i].value);
  }
}

// Runs one measurement, `measurement(api, timer)`, through MPI_* only, or
// in pairs alternating which side goes first.
template <typename Measurement>
void report(const Settings& settings, std::size_t bytes, Measurement measurement) {
  Timer timer(settings.seconds);
  if (settings.pairs == 0) {
    print(measurement(kIntercepted, timer), bytes);
    return;
  }
  for (int pair = 0; pair < settings.pairs; ++pair) {
    const bool plain_first = pair % 2 == 0;
    const Figures first = measurement(plain_first ? kPlain : kIntercepted, timer);
    const Figures second = measurement(plain_first ? kIntercepted : kPlain, timer);
    print_pairs(plain_first ? first : second, plain_first ? second : first, bytes);
  }
}

void point_to_point(const Settings& settings, std::size_t bytes) {
  std::vector<std::vector<char>> buffers(kWindow, std::vector<char>(bytes, 1));
  std::vector<char> other(bytes, 2);
  if (wants(settings, "pingpong")) {
    report(settings, bytes, [&](const Api& api, Timer& timer) { return pingpong(api, timer, bytes, buffers[0]); });
  }
  if (wants(settings, "sendrecv")) {
    report(settings, bytes,
           [&](const Api& api, Timer& timer) { return sendrecv(api, timer, bytes, buffers[0], other); });
  }
  for (const bool shared : {false, true}) {
    if (!wants(settings, shared ? "window_shared" : "window_distinct")) continue;
    report(settings, bytes,
           [&](const Api& api, Timer& timer) { return window(api, timer, bytes, shared, buffers); });
  }
  if (wants(settings, "persistent")) {
    report(settings, bytes, [&](const Api& api, Timer& timer) { return persistent(api, timer, bytes, buffers); });
  }
}

void collectives(const Settings& settings) {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  for (const std::size_t bytes : {std::size_t{8}, std::size_t{64} << 10, std::size_t{16} << 20}) {
    const int floats = static_cast<int>(bytes / sizeof(float));
    std::vector<float> send(static_cast<std::size_t>(floats) * static_cast<std::size_t>(size), 1.0f);
    std::vector<float> receive(send.size());
    if (wants(settings, "allreduce")) {
      report(settings, bytes, [&](const Api& api, Timer& timer) {
        const double t = timer.per_step(
            [&] { api.allreduce(send.data(), receive.data(), floats, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); });
        return Figures{{"allreduce", "latency_us", t * 1e6}};
      });
    }
    if (wants(settings, "bcast")) {
      report(settings, bytes, [&](const Api& api, Timer& timer) {
        const double t = timer.per_step([&] { api.bcast(send.data(), floats, MPI_FLOAT, 0, MPI_COMM_WORLD); });
        return Figures{{"bcast", "latency_us", t * 1e6}};
      });
    }
    if (wants(settings, "alltoall")) {
      report(settings, bytes, [&](const Api& api, Timer& timer) {
        const double t = timer.per_step([&] {
          api.alltoall(send.data(), floats, MPI_FLOAT, receive.data(), floats, MPI_FLOAT, MPI_COMM_WORLD);
        });
        return Figures{{"alltoall", "latency_us", t * 1e6}};
      });
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

// The shared object that defines `function`: the MPI library's, or
// cumpi's when it is preloaded.
const char* defining_object(void* function) {
  Dl_info info{};
  if (dladdr(function, &info) == 0 || info.dli_fname == nullptr) return "(unknown)";
  const char* slash = std::strrchr(info.dli_fname, '/');
  return slash != nullptr ? slash + 1 : info.dli_fname;
}

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
    std::printf("# host_path_bench: %d ranks, cuda context %d, device request in flight %d, window %d, pairs %d, "
                "MPI_Irecv from %s\n",
                size, settings.cuda_context ? 1 : 0, settings.device_in_flight ? 1 : 0, kWindow, settings.pairs,
                defining_object(reinterpret_cast<void*>(kIntercepted.irecv)));
  }
  {
    const DeviceInFlight device(settings.device_in_flight);
    std::vector<std::size_t> sizes;
    for (std::size_t bytes = settings.min_bytes; bytes <= settings.max_bytes; bytes *= settings.factor) {
      sizes.push_back(bytes);
    }
    if (sizes.empty() || sizes.back() != settings.max_bytes) sizes.push_back(settings.max_bytes);
    for (const std::size_t bytes : sizes) point_to_point(settings, bytes);
    collectives(settings);
  }
  MPI_Finalize();
  return 0;
}
