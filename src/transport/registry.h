// The transports of this process, in the order CUMPI_TRANSPORTS gives
// (`cuda_ipc,staged` by default). The staged transport is always there,
// last unless placed earlier: a message no other transport carries or
// accepts takes it.
#pragma once

#include <string>
#include <vector>

#include "transport/transport.h"

namespace cumpi::transport {

class Registry {
 public:
  // Registers the transports named in `names`, in that order; unknown names
  // were refused when the configuration was read.
  void configure(const std::vector<std::string>& names);
  // Registers these transports, in this order (configure's work; tests
  // register their own). The staged transport is appended when missing.
  void use(std::vector<Transport*> ordered);

  const std::vector<Transport*>& ordered() const { return ordered_; }
  // The registered transport of `id`; null for an id not registered here
  // (a peer configured differently).
  Transport* find(TransportId id) const;

  // The first transport that may carry device data to `peer` (for the
  // eager limits, before the message exists); the staged one at worst.
  Transport& likely_for(const Peer& peer) const;
  // The first transport that carries `source` to the
  // message's peer and describes it in `blob`.
  Transport& choose_for_send(const Source& source, const Message& message, Blob* blob) const;

  // Every transport's own progress; every transport's shutdown.
  void progress_all() const;
  void shutdown_all() const;

 private:
  std::vector<Transport*> ordered_;
};

Registry& transports();

// Every transport this library knows, by name: what CUMPI_TRANSPORTS may
// list.
Transport* transport_named(const std::string& name);

}  // namespace cumpi::transport
