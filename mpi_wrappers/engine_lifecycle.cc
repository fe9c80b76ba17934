#include "mpi_wrappers/engine_lifecycle.h"

#include <cstdio>

#include "coll/hierarchy.h"
#include "coll/selection.h"
#include "memory/classifier.h"
#include "memory/copy_engine.h"
#include "memory/device_scratch.h"
#include "memory/staging_pool.h"
#include "mpi_wrappers/large_count_types.h"
#include "protocol/channel.h"
#include "protocol/comm_context.h"
#include "protocol/node_map.h"
#include "protocol/progress.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "runtime/runtime.h"
#include "runtime/stats.h"
#include "transport/registry.h"

namespace cumpi::wrappers {

namespace {

// Collective over MPI_COMM_WORLD: what every rank agrees on at init.
Status open_protocol() {
  Status status = protocol::gather_node_map();
  if (status.is_ok()) {
    status = protocol::start_comm_contexts();
  }
  if (status.is_ok()) {
    status = protocol::open_channel();
  }
  return status;
}

}  // namespace

void start_engine() {
  runtime::start();
  memory::start_classifier();
  transport::transports().configure(config().transports.names);
  coll::selection().configure(config().coll.names);
  if (!config().disable) {
    const Status opened = open_protocol();
    if (!opened.is_ok()) {
      CUMPI_LOG(warn, "no private channel (MPI error %d): device messages all go eagerly", opened.mpi_code());
    }
    coll::set_hierarchy_on(opened.is_ok() && protocol::every_rank_asks_hierarchy());
  }
  runtime::set_entry_state(runtime::kActive, !config().disable);
  CUMPI_LOG(info, "cumpi started (%s device memory)%s", memory::device_memory().name(),
            config().disable ? ", disabled by CUMPI_DISABLE" : "");
}

void stop_engine() {
  if (!runtime::interposing()) {
    return;
  }
  runtime::set_entry_state(runtime::kActive, false);
  protocol::drain_before_finalize();
  free_large_count_types();
  if (config().stats) {
    std::fprintf(stderr, "%s", stats::format_table(runtime::world_rank()).c_str());
  }
  transport::transports().shutdown_all();
  coll::set_hierarchy_on(false);
  protocol::close_channel();
  protocol::stop_comm_contexts();
  protocol::forget_node_map();
  memory::staging_pool().clear();
  memory::device_scratch().clear();
  memory::copy_engine().shutdown();
}

}  // namespace cumpi::wrappers
