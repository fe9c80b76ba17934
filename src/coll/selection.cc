#include "coll/selection.h"

#include <algorithm>
#include <atomic>
#include <bitset>
#include <cstdlib>
#include <memory>

#include "coll/agreement.h"
#include "coll/ipc_algorithm.h"
#include "coll/nccl_algorithm.h"
#include "coll/staged_algorithm.h"
#include "runtime/log.h"

namespace cumpi::coll {

namespace {

std::atomic<std::uint64_t> g_on_gpu{0};
std::atomic<std::uint64_t> g_staged{0};

// The collectives of one communicator whose choice was said already.
class SaidChoices final : public protocol::CommState {
 public:
  std::bitset<static_cast<std::size_t>(Collective::count)> said;
};

void log_choice_once(protocol::CommContext& context, const CollectiveCall& call, const Algorithm& chosen,
                     const std::string& reasons) {
  if (!log::enabled(log::Level::info)) {
    return;
  }
  auto* choices = static_cast<SaidChoices*>(context.state("coll.said"));
  if (choices == nullptr) {
    auto made = std::make_unique<SaidChoices>();
    choices = made.get();
    context.set_state("coll.said", std::move(made));
  }
  const auto index = static_cast<std::size_t>(call.collective);
  if (choices->said.test(index)) {
    return;
  }
  choices->said.set(index);
  CUMPI_LOG(info, "%s on device buffers of a communicator of %d ranks on %d node%s takes %s%s%s",
            collective_name(call.collective), context.size(), context.nodes(), context.nodes() == 1 ? "" : "s",
            chosen.name(), reasons.empty() ? "" : " (", reasons.empty() ? "" : (reasons + ")").c_str());
}

}  // namespace

const char* collective_name(Collective collective) {
  switch (collective) {
    case Collective::allreduce:
      return "MPI_Allreduce";
    case Collective::reduce:
      return "MPI_Reduce";
    case Collective::bcast:
      return "MPI_Bcast";
    case Collective::allgather:
      return "MPI_Allgather";
    case Collective::alltoall:
      return "MPI_Alltoall";
    case Collective::reduce_scatter_block:
      return "MPI_Reduce_scatter_block";
    case Collective::count:
      break;
  }
  return "a collective";
}

namespace {

Algorithm* algorithm_named(const std::string& name) {
  for (Algorithm* algorithm : {static_cast<Algorithm*>(&nccl_algorithm()), static_cast<Algorithm*>(&ipc_algorithm()),
                               static_cast<Algorithm*>(&staged_algorithm())}) {
    if (name == algorithm->name()) {
      return algorithm;
    }
  }
  return nullptr;
}

}  // namespace

void Selection::configure(const std::vector<std::string>& names) {
  std::vector<Algorithm*> algorithms;
  for (const std::string& name : names) {
    if (Algorithm* algorithm = algorithm_named(name)) {
      algorithms.push_back(algorithm);
    }
  }
  if (std::find(algorithms.begin(), algorithms.end(), &staged_algorithm()) == algorithms.end()) {
    algorithms.push_back(&staged_algorithm());
  }
  use(std::move(algorithms));
  bool agreement = false;
  for (Algorithm* algorithm : ordered_) {
    agreement = agreement || !algorithm->runs_beside_host_ranks();
  }
  set_host_calls_announce(agreement);
}

void Selection::use(std::vector<Algorithm*> algorithms) {
  ordered_ = std::move(algorithms);
  offsets_.assign(ordered_.size(), 0);
  std::size_t next = 0;
  for (std::size_t i = 0; i < ordered_.size(); ++i) {
    offsets_[i] = next;
    next += ordered_[i]->offer_bytes();
  }
  // Every region fits: the algorithms' offers are fixed-size structs.
  if (next > AgreementBoard::kPayloadBytes) {
    CUMPI_LOG(error, "the collective algorithms' offers need %zu bytes, the board has %zu", next,
              AgreementBoard::kPayloadBytes);
    std::abort();
  }
}

namespace {

// This rank's offers: a bit for each algorithm needing agreement that takes
// the call and could write its offer into its region of the board's
// payload. Why the others did not, in `why`.
unsigned offers_of(const std::vector<Algorithm*>& ordered, const std::vector<std::size_t>& offsets,
                   const protocol::CommContext& context, CollectiveCall* call, AgreementBoard* board,
                   std::vector<std::string>* why) {
  unsigned offers = 0;
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    Algorithm* algorithm = ordered[i];
    std::string& why_not = (*why)[i];
    if (algorithm->runs_beside_host_ranks()) {
      continue;
    }
    if (board == nullptr) {
      why_not = call->request != nullptr ? "a nonblocking call"
                                         : "needs every rank's buffers on a device, and this communicator has no "
                                           "agreement board (ranks on several nodes, one rank, an "
                                           "inter-communicator, or no shared memory)";
    } else if (algorithm->takes(context, *call, &why_not) &&
               algorithm->offer(*call, static_cast<char*>(board->own_payload()) + offsets[i], &why_not)) {
      offers |= 1U << i;
    }
  }
  return offers;
}

}  // namespace

Algorithm& Selection::choose(const protocol::CommContext& context, CollectiveCall* call, AgreementBoard* board,
                             std::string* reasons) const {
  std::vector<std::string> why(ordered_.size());
  const unsigned offers = offers_of(ordered_, offsets_, context, call, board, &why);
  unsigned agreed = 0;
  if (board != nullptr) {
    call->board = board;
    call->agreed_call = board->announce(offers);
    agreed = offers != 0 ? board->agree(call->agreed_call, offers, polite_wait()) : 0U;
  }
  for (std::size_t i = 0; i < ordered_.size(); ++i) {
    Algorithm* algorithm = ordered_[i];
    call->payload_offset = offsets_[i];
    if (algorithm->runs_beside_host_ranks() ? algorithm->takes(context, *call, &why[i])
                                            : (agreed & (1U << i)) != 0 && algorithm->accepts(*call, &why[i])) {
      return *algorithm;
    }
    if (why[i].empty()) {
      why[i] = "not every rank could take it (host buffers, or a decline, on some rank)";
    }
    if (reasons != nullptr) {
      *reasons += (reasons->empty() ? "" : "; ") + std::string(algorithm->name()) + ": " + why[i];
    }
  }
  return staged_algorithm();
}

Selection& selection() {
  static Selection* selected = new Selection();  // lives until exit
  return *selected;
}

Status run_collective(CollectiveCall call) {
  Status status;
  const std::shared_ptr<protocol::CommContext> context = protocol::context_of(call.comm, &status);
  if (context == nullptr) {
    return status;
  }
  AgreementBoard* board = call.request == nullptr ? agreement_board(*context, call.comm, &status) : nullptr;
  if (!status.is_ok()) {
    return status;
  }
  // The reasons are joined only where they may be logged: strings on every call cost.
  std::string reasons;
  Algorithm& chosen =
      selection().choose(*context, &call, board, log::enabled(log::Level::info) ? &reasons : nullptr);
  log_choice_once(*context, call, chosen, reasons);
  (chosen.runs_beside_host_ranks() ? g_staged : g_on_gpu).fetch_add(1, std::memory_order_relaxed);
  return chosen.run(call);
}

CollectiveCounts collective_counts() {
  return CollectiveCounts{g_on_gpu.load(std::memory_order_relaxed), g_staged.load(std::memory_order_relaxed)};
}

}  // namespace cumpi::coll
