#include "runtime/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/stats.h"

namespace cumpi::runtime {

namespace {

int g_world_rank = -1;
bool g_unset_opal_cuda_support = false;

bool truthy(const char* value) {
  auto parsed = parse_bool(value == nullptr ? "" : value);
  return parsed.value_or(false);
}

// Open MPI built without CUDA crashes in MPI_Init when asked for CUDA support;
// users set this variable following CUDA-aware MPI recipes. The constructor
// only unsets it (it runs in mpirun too); the warning waits for MPI_Init,
// where the rank is known. Nothing else happens at load time.
__attribute__((constructor)) void unset_opal_cuda_support() {
  if (truthy(std::getenv("OMPI_MCA_opal_cuda_support"))) {
    unsetenv("OMPI_MCA_opal_cuda_support");
    g_unset_opal_cuda_support = true;
  }
}

}  // namespace

// The ground floor's part of MPI_Init: this rank's logging, configuration
// and statistics.
void start() {
  real_mpi().Comm_rank(MPI_COMM_WORLD, &g_world_rank);
  log::set_rank(g_world_rank);
  const ParsedConfig parsed = load_config(g_world_rank == 0);
  if (g_unset_opal_cuda_support) {
    CUMPI_LOG(warn,
              "OMPI_MCA_opal_cuda_support=1 was unset: this Open MPI is not CUDA-aware and would crash in "
              "MPI_Init; cumpi provides the CUDA support");
  }
  if (config().print_config && g_world_rank == 0) {
    std::fprintf(stderr, "cumpi configuration:\n%s", describe_config(parsed).c_str());
  }
  stats::g_enabled.store(config().stats, std::memory_order_relaxed);
  set_entry_state(kStatisticsWork, config().stats);
}

int world_rank() { return g_world_rank; }

}  // namespace cumpi::runtime
