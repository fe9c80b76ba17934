// cumpi-info: what cumpi is and would do on this machine, as ompi_info and
// ucx_info say it for theirs. Version and build options of the libcumpi it
// runs with, the MPI library, the GPUs the CUDA driver sees (no context is
// made), peer access between them, MPS, the transport device messages would
// take between this node's GPUs and to other nodes, and every CUMPI_* knob
// with its value and source.
//
//   cumpi-info [--json]
#include <dlfcn.h>
#include <mpi.h>
#include <sys/stat.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "cumpi/cumpi.h"

namespace {

// The few driver calls cumpi-info makes, found with dlopen: a machine
// without a GPU has no libcuda.
struct Driver {
  using Init = int (*)(unsigned);
  using Count = int (*)(int*);
  using Get = int (*)(int*, int);
  using Name = int (*)(char*, int, int);
  using Uuid = int (*)(unsigned char*, int);
  using Peer = int (*)(int*, int, int);
  using Version = int (*)(int*);
  Init init = nullptr;
  Count count = nullptr;
  Get get = nullptr;
  Name name = nullptr;
  Uuid uuid = nullptr;
  Peer can_access_peer = nullptr;
  Version version = nullptr;
};

struct Gpu {
  std::string name;
  std::string uuid;
};

struct Machine {
  std::string driver_problem;  // empty when the driver answered
  int driver_version = 0;
  std::vector<Gpu> gpus;
  std::vector<std::vector<bool>> peer;  // peer[i][j]: GPU i maps GPU j's memory
  std::string mps;
};

template <typename F>
F symbol(void* library, const char* name) {
  return reinterpret_cast<F>(dlsym(library, name));
}

std::string uuid_text(const unsigned char* bytes) {
  std::string text = "GPU-";
  const int groups[] = {4, 2, 2, 2, 6};
  int at = 0;
  for (int group = 0; group < 5; ++group) {
    if (group > 0) text += "-";
    for (int i = 0; i < groups[group]; ++i) {
      char hex[3];
      std::snprintf(hex, sizeof(hex), "%02x", bytes[at++]);
      text += hex;
    }
  }
  return text;
}

void find_gpus(Machine* machine) {
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    machine->driver_problem = "no CUDA driver (libcuda.so.1 does not load)";
    return;
  }
  Driver driver;
  driver.init = symbol<Driver::Init>(library, "cuInit");
  driver.count = symbol<Driver::Count>(library, "cuDeviceGetCount");
  driver.get = symbol<Driver::Get>(library, "cuDeviceGet");
  driver.name = symbol<Driver::Name>(library, "cuDeviceGetName");
  driver.uuid = symbol<Driver::Uuid>(library, "cuDeviceGetUuid_v2");
  driver.can_access_peer = symbol<Driver::Peer>(library, "cuDeviceCanAccessPeer");
  driver.version = symbol<Driver::Version>(library, "cuDriverGetVersion");
  int count = 0;
  if (driver.init == nullptr || driver.count == nullptr || driver.get == nullptr || driver.init(0) != 0 ||
      driver.count(&count) != 0) {
    machine->driver_problem = "the CUDA driver loads but finds no usable GPU (cuInit or cuDeviceGetCount failed)";
    return;
  }
  if (driver.version != nullptr) driver.version(&machine->driver_version);
  std::vector<int> devices(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) {
    driver.get(&devices[static_cast<std::size_t>(i)], i);
    Gpu gpu;
    char name[256] = {};
    if (driver.name != nullptr && driver.name(name, sizeof(name), devices[static_cast<std::size_t>(i)]) == 0) {
      gpu.name = name;
    }
    unsigned char uuid[16] = {};
    if (driver.uuid != nullptr && driver.uuid(uuid, devices[static_cast<std::size_t>(i)]) == 0) {
      gpu.uuid = uuid_text(uuid);
    }
    machine->gpus.push_back(gpu);
  }
  machine->peer.assign(static_cast<std::size_t>(count), std::vector<bool>(static_cast<std::size_t>(count), false));
  for (int i = 0; i < count; ++i) {
    for (int j = 0; j < count; ++j) {
      int can = i == j ? 1 : 0;
      if (i != j && driver.can_access_peer != nullptr) {
        driver.can_access_peer(&can, devices[static_cast<std::size_t>(i)], devices[static_cast<std::size_t>(j)]);
      }
      machine->peer[static_cast<std::size_t>(i)][static_cast<std::size_t>(j)] = can != 0;
    }
  }
}

// MPS clients find the daemon through its pipe directory.
std::string find_mps() {
  const char* set = std::getenv("CUDA_MPS_PIPE_DIRECTORY");
  const std::string directory = set != nullptr ? set : "/tmp/nvidia-mps";
  struct stat info {};
  const std::string control = directory + "/control";
  if (stat(control.c_str(), &info) == 0) {
    return "MPS control pipe at " + control + ": ranks sharing a GPU go through the MPS server";
  }
  return std::string("no MPS control pipe at ") + control +
         ": ranks sharing a GPU time-slice it (start nvidia-cuda-mps-control -d for MPS)";
}

struct Setting {
  std::string name, value, source, meaning;
};

std::vector<Setting> settings() {
  std::vector<cumpi_setting> raw(64);
  int count = cumpi_get_settings(raw.data(), static_cast<int>(raw.size()));
  if (count > static_cast<int>(raw.size())) {
    raw.resize(static_cast<std::size_t>(count));
    count = cumpi_get_settings(raw.data(), count);
  }
  std::vector<Setting> out;
  for (int i = 0; i < count; ++i) {
    const cumpi_setting& s = raw[static_cast<std::size_t>(i)];
    out.push_back(Setting{s.name, s.value, s.source, s.meaning});
  }
  return out;
}

std::string value_of(const std::vector<Setting>& all, const char* name) {
  for (const Setting& s : all) {
    if (s.name == name) return s.value;
  }
  return "";
}

// The names of a comma-separated list, in order.
std::vector<std::string> names_in(const std::string& list) {
  std::vector<std::string> names;
  std::size_t at = 0;
  for (;;) {
    const std::size_t comma = list.find(',', at);
    names.push_back(list.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
    if (comma == std::string::npos) return names;
    at = comma + 1;
  }
}

// The route a device message would take, by the registry's rules: the first
// transport of CUMPI_TRANSPORTS that can carry it, staged always last. On
// this node cuda_ipc carries what the receiving GPU can map; ucx carries
// this node's messages only where listed before cuda_ipc.
std::string route(const std::string& transports, bool same_node, bool mappable, bool ucx_built) {
  bool cuda_ipc_before = false;
  for (const std::string& name : names_in(transports)) {
    if (name == "cuda_ipc" && same_node && mappable) return "cuda_ipc";
    if (name == "ucx" && ucx_built && (!same_node || !cuda_ipc_before)) return "ucx";
    if (name == "staged") return "staged";
    cuda_ipc_before = cuda_ipc_before || name == "cuda_ipc";
  }
  return "staged";
}

std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof(escaped), "\\u%04x", c);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

struct Report {
  cumpi_build_info build{};
  std::string mpi_library;
  Machine machine;
  std::vector<Setting> knobs;
  std::string transports;
};

std::string pair_route(const Report& r, std::size_t i, std::size_t j) {
  return route(r.transports, true, r.machine.peer[i][j], r.build.ucx != 0);
}

void print_text(const Report& r) {
  std::printf("cumpi %s\n", cumpi_version());
  std::printf("  built with: ucx transport %s, copy and reduction kernels %s, MPI header %s\n",
              r.build.ucx ? "yes" : "no", r.build.kernels ? "yes" : "no", r.build.mpi_header);
  std::printf("  NCCL: %s\n", r.build.nccl_loadable ? (std::string("loads, ") + r.build.nccl).c_str() : r.build.nccl);
  std::printf("  MPI library: %s\n", r.mpi_library.c_str());
  if (!r.machine.driver_problem.empty()) {
    std::printf("GPUs: %s\n", r.machine.driver_problem.c_str());
  } else {
    std::printf("GPUs: %zu (CUDA driver %d.%d)\n", r.machine.gpus.size(), r.machine.driver_version / 1000,
                (r.machine.driver_version % 1000) / 10);
    for (std::size_t i = 0; i < r.machine.gpus.size(); ++i) {
      std::printf("  %zu: %s, %s\n", i, r.machine.gpus[i].name.c_str(), r.machine.gpus[i].uuid.c_str());
    }
  }
  std::printf("MPS: %s\n", r.machine.mps.c_str());
  std::printf("Routes of device messages (CUMPI_TRANSPORTS=%s):\n", r.transports.c_str());
  for (std::size_t i = 0; i < r.machine.gpus.size(); ++i) {
    for (std::size_t j = 0; j < r.machine.gpus.size(); ++j) {
      std::printf("  GPU %zu -> GPU %zu, this node: %s%s\n", i, j, pair_route(r, i, j).c_str(),
                  i == j ? " (same GPU)" : (r.machine.peer[i][j] ? " (peer access)" : " (no peer access)"));
    }
  }
  std::printf("  ranks on this node, GPU memory not mappable here: %s\n",
              route(r.transports, true, false, r.build.ucx != 0).c_str());
  std::printf("  ranks on other nodes: %s\n", route(r.transports, false, false, r.build.ucx != 0).c_str());
  std::printf("Settings:\n");
  for (const Setting& s : r.knobs) {
    std::printf("  %s=%s (%s)  %s\n", s.name.c_str(), s.value.c_str(), s.source.c_str(), s.meaning.c_str());
  }
}

void print_json(const Report& r) {
  std::printf("{\n  \"version\": %s,\n", json_string(cumpi_version()).c_str());
  std::printf("  \"build\": {\"ucx\": %s, \"kernels\": %s, \"mpi_header\": %s},\n", r.build.ucx ? "true" : "false",
              r.build.kernels ? "true" : "false", json_string(r.build.mpi_header).c_str());
  std::printf("  \"nccl\": {\"loadable\": %s, \"detail\": %s},\n", r.build.nccl_loadable ? "true" : "false",
              json_string(r.build.nccl).c_str());
  std::printf("  \"mpi_library\": %s,\n", json_string(r.mpi_library).c_str());
  std::printf("  \"cuda_driver\": {\"found\": %s, \"version\": %d, \"problem\": %s},\n",
              r.machine.driver_problem.empty() ? "true" : "false", r.machine.driver_version,
              json_string(r.machine.driver_problem).c_str());
  std::printf("  \"gpus\": [");
  for (std::size_t i = 0; i < r.machine.gpus.size(); ++i) {
    std::printf("%s\n    {\"index\": %zu, \"name\": %s, \"uuid\": %s, \"peer_access\": [", i ? "," : "", i,
                json_string(r.machine.gpus[i].name).c_str(), json_string(r.machine.gpus[i].uuid).c_str());
    for (std::size_t j = 0; j < r.machine.gpus.size(); ++j) {
      std::printf("%s%s", j ? ", " : "", r.machine.peer[i][j] ? "true" : "false");
    }
    std::printf("], \"routes\": [");
    for (std::size_t j = 0; j < r.machine.gpus.size(); ++j) {
      std::printf("%s%s", j ? ", " : "", json_string(pair_route(r, i, j)).c_str());
    }
    std::printf("]}");
  }
  std::printf("%s],\n", r.machine.gpus.empty() ? "" : "\n  ");
  std::printf("  \"mps\": %s,\n", json_string(r.machine.mps).c_str());
  std::printf("  \"routes\": {\"transports\": %s, \"this_node_unmappable\": %s, \"other_nodes\": %s},\n",
              json_string(r.transports).c_str(),
              json_string(route(r.transports, true, false, r.build.ucx != 0)).c_str(),
              json_string(route(r.transports, false, false, r.build.ucx != 0)).c_str());
  std::printf("  \"settings\": [");
  for (std::size_t i = 0; i < r.knobs.size(); ++i) {
    const Setting& s = r.knobs[i];
    std::printf("%s\n    {\"name\": %s, \"value\": %s, \"source\": %s, \"meaning\": %s}", i ? "," : "",
                json_string(s.name).c_str(), json_string(s.value).c_str(), json_string(s.source).c_str(),
                json_string(s.meaning).c_str());
  }
  std::printf("\n  ]\n}\n");
}

}  // namespace

int main(int argc, char** argv) {
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--json") == 0) {
      json = true;
    } else {
      std::fprintf(stderr, "usage: %s [--json]\n", argv[0]);
      return std::strcmp(argv[i], "--help") == 0 ? 0 : 2;
    }
  }
  Report report;
  cumpi_get_build_info(&report.build);
  // Callable before MPI_Init (MPI 3.0): cumpi-info never starts MPI.
  char library[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(library, &length);
  report.mpi_library = std::string(library, static_cast<std::size_t>(length));
  while (!report.mpi_library.empty() && (report.mpi_library.back() == '\n' || report.mpi_library.back() == ' ')) {
    report.mpi_library.pop_back();
  }
  const std::size_t newline = report.mpi_library.find('\n');
  if (newline != std::string::npos) report.mpi_library = report.mpi_library.substr(0, newline);
  find_gpus(&report.machine);
  report.machine.mps = find_mps();
  report.knobs = settings();
  report.transports = value_of(report.knobs, "CUMPI_TRANSPORTS");
  if (json) {
    print_json(report);
  } else {
    print_text(report);
  }
  return 0;
}
