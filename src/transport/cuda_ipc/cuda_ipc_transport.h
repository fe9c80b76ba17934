// The CUDA IPC transport (DESIGN §4): between ranks of one node, the
// receiver maps the sender's device allocation (ipc_cache.h) and copies the
// message in one copy, device to device or device to host; the sender only
// waits for FIN. It declines where the receiver cannot map the sender's GPU
// (GPU isolation, no CUDA context), and the sender then stops offering it to
// that receiver.
#pragma once

#include <memory>
#include <mutex>
#include <set>

#include "transport/cuda_ipc/ipc_driver.h"
#include "transport/transport.h"

namespace cumpi::transport {

class CudaIpcTransport final : public Transport {
 public:
  const char* name() const override { return "cuda_ipc"; }
  TransportId id() const override { return TransportId::cuda_ipc; }
  stats::Route route() const override { return stats::Route::ipc; }

  bool can_send(const Peer& peer) const override;
  std::size_t rendezvous_from() const override;
  bool carries_short_messages() const override { return true; }
  bool describe(const Source& source, const Message& message, Blob* blob) override;
  std::unique_ptr<Transfer> start_send(const Source&, const Message&, const Blob&, Status*) override {
    return nullptr;  // the receiver copies
  }
  void declined_by(int peer) override;

  std::unique_ptr<Transfer> accept(const Message& message, const Blob& blob, const Landing& landing, Decline* decline,
                                   Status* error) override;

  // The copies a progress sweep queued go to the GPU as one batch.
  void progress() override;
  // Closes every mapping.
  void shutdown() override;

 private:
  // Said once per sender: it shares this GPU without MPS.
  void note_shared_gpu(int sender, const IpcExport& exported, void* context);

  mutable std::mutex mutex_;
  std::set<int> declining_peers_;  // receivers that cannot map this rank's memory
  std::set<int> noted_senders_;
};

CudaIpcTransport& cuda_ipc_transport();

}  // namespace cumpi::transport
