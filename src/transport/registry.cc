#include "transport/registry.h"

#include <utility>

#include "transport/cuda_ipc/cuda_ipc_transport.h"
#include "transport/staged/staged_transport.h"
#if CUMPI_HAVE_UCX
#include "transport/ucx/ucx_transport.h"
#endif

namespace cumpi::transport {

Transport* transport_named(const std::string& name) {
  if (name == cuda_ipc_transport().name()) return &cuda_ipc_transport();
  if (name == staged_transport().name()) return &staged_transport();
#if CUMPI_HAVE_UCX
  if (name == ucx_transport().name()) return &ucx_transport();
#endif
  return nullptr;
}

void Registry::configure(const std::vector<std::string>& names) {
  std::vector<Transport*> named;
  for (const std::string& name : names) {
    Transport* transport = transport_named(name);
    if (transport != nullptr) {
      transport->configured(names);
      named.push_back(transport);
    }
  }
  use(std::move(named));
}

void Registry::use(std::vector<Transport*> ordered) {
  ordered_.clear();
  for (Transport* transport : ordered) {
    if (find(transport->id()) == nullptr) ordered_.push_back(transport);
  }
  if (find(TransportId::staged) == nullptr) {
    ordered_.push_back(&staged_transport());
  }
}

Transport* Registry::find(TransportId id) const {
  for (Transport* transport : ordered_) {
    if (transport->id() == id) return transport;
  }
  return nullptr;
}

Transport& Registry::likely_for(const Peer& peer) const {
  for (Transport* transport : ordered_) {
    if (transport->can_send(peer)) return *transport;
  }
  return staged_transport();
}

Transport& Registry::choose_for_send(const Source& source, const Message& message, Blob* blob) const {
  for (Transport* transport : ordered_) {
    if (transport->can_send(message.peer) && transport->describe(source, message, blob)) {
      return *transport;
    }
  }
  // Never reached while the staged transport is registered; kept total.
  staged_transport().describe(source, message, blob);
  return staged_transport();
}

void Registry::progress_all() const {
  for (Transport* transport : ordered_) transport->progress();
}

void Registry::shutdown_all() const {
  for (Transport* transport : ordered_) transport->shutdown();
}

Registry& transports() {
  static Registry* registry = new Registry();  // lives until exit
  return *registry;
}

}  // namespace cumpi::transport
