#include "runtime/runtime.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "memory/classifier.h"
#include "memory/staging_pool.h"
#include "protocol/channel.h"
#include "protocol/progress.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/real_mpi.h"
#include "runtime/stats.h"
#include "transport/registry.h"

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
  memory::start_classifier();
  transport::transports().configure(config().transports.names);
  if (!config().disable) {
    Status opened = protocol::open_channel();
    if (!opened.is_ok()) {
      CUMPI_LOG(warn, "no private channel (MPI error %d): device messages all go eagerly", opened.mpi_code());
    }
  }
  set_entry_state(kActive, !config().disable);
  CUMPI_LOG(info, "cumpi started (%s backend)%s", memory::backend_name(),
            config().disable ? ", disabled by CUMPI_DISABLE" : "");
}

void stop() {
  if (!interposing()) {
    return;
  }
  set_entry_state(kActive, false);
  protocol::drain_before_finalize();
  if (config().stats) {
    std::fprintf(stderr, "%s", stats::format_table(g_world_rank).c_str());
  }
  transport::transports().shutdown_all();
  protocol::close_channel();
  memory::staging_pool().clear();
  memory::stop_backend();
}

}  // namespace cumpi::runtime
