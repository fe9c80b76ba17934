// Messages cumpi had to take out of MPI before the user received them
// (DESIGN §3, probes): a probe that finds a message of exactly the
// envelope's size must look inside to report the real size, and looking
// means receiving it (PMPI_Mprobe + PMPI_Mrecv). Such messages wait here,
// in the order they were matched; receives on a matching (comm, source, tag)
// take them before anything MPI still holds, and MPI_Mprobe hands them out
// as message handles only cumpi understands.
#pragma once

#include <cstddef>
#include <list>
#include <memory>
#include <mutex>
#include <vector>

#include "protocol/envelope.h"
#include "runtime/mpi_api.h"
#include "runtime/runtime.h"
#include "runtime/status.h"

namespace cumpi::protocol {

struct QueuedMessage {
  MPI_Comm comm{};
  int source = 0;
  int tag = 0;
  bool is_envelope = false;
  Envelope envelope;                 // is_envelope
  std::vector<unsigned char> bytes;  // otherwise: the plain message
  MPI_Message handle{};              // once handed out

  std::size_t real_bytes() const { return is_envelope ? envelope.bytes : bytes.size(); }
};

// Messages in the queue or handed out as message handles (the entry state's
// kQueuedMessages bit): while none exist, receives need not look.
inline bool has_queued_messages() { return (runtime::entry_state() & runtime::kQueuedMessages) != 0; }

class MatchedQueue {
 public:
  // Receives the message MPI matched into `message` (of `probed`'s size,
  // source and tag) and appends it.
  Status take(MPI_Message* message, const MPI_Status& probed, MPI_Comm comm);
  // The first queued message on comm matching source and tag (wildcards
  // allowed), left in place; null when none.
  const QueuedMessage* find(MPI_Comm comm, int source, int tag);
  // The same, taken out of the queue.
  std::unique_ptr<QueuedMessage> pop(MPI_Comm comm, int source, int tag);
  // Hands a message out as a message handle (MPI_Mprobe); it then matches no
  // receive but the MPI_Mrecv/Imrecv of that handle.
  MPI_Message hand_out(std::unique_ptr<QueuedMessage> message);
  bool is_handed_out(MPI_Message handle);
  // The communicator of a handed-out message; MPI_COMM_NULL for any other.
  MPI_Comm comm_of_handed_out(MPI_Message handle);
  std::unique_ptr<QueuedMessage> take_handed_out(MPI_Message handle);

 private:
  void publish();

  std::mutex mutex_;
  std::list<std::unique_ptr<QueuedMessage>> queue_;
  std::list<std::unique_ptr<QueuedMessage>> handed_out_;
  std::uint32_t serial_ = 0;  // of handles, where they are integers
};

MatchedQueue& matched_queue();

// Fills a user's status (unless MPI_STATUS_IGNORE) as MPI would for a
// message of `bytes` from source with tag.
void report_status(MPI_Status* status, int source, int tag, std::size_t bytes, int error);

// The probes (DESIGN §3): real sizes of device messages, the queue first.
// `flag` is null for the blocking forms.
Status probe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status);
Status mprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Message* message, MPI_Status* status);

}  // namespace cumpi::protocol
