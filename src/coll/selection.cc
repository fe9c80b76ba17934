#include "coll/selection.h"

#include <algorithm>
#include <atomic>
#include <bitset>
#include <cctype>
#include <cstdlib>
#include <memory>

#include "coll/agreement.h"
#include "coll/hierarchy.h"
#include "coll/ipc_algorithm.h"
#include "coll/nccl_algorithm.h"
#include "coll/staged_algorithm.h"
#include "protocol/progress.h"
#include "runtime/config.h"
#include "runtime/log.h"

namespace cumpi::coll {

namespace {

std::atomic<std::uint64_t> g_on_gpu{0};
std::atomic<std::uint64_t> g_staged{0};

// The collectives of one communicator whose choice was said already.
class SaidChoices final : public protocol::CommState {
 public:
  std::bitset<2 * static_cast<std::size_t>(Collective::count)> said;  // blocking, then nonblocking forms
};

// MPI_Allreduce, or MPI_Iallreduce for a nonblocking call.
std::string call_name(const CollectiveCall& call) {
  std::string name = collective_name(call.collective);
  constexpr std::size_t kAfterPrefix = 4;  // "MPI_"
  if (call.request != nullptr) {
    name[kAfterPrefix] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[kAfterPrefix])));
    name.insert(kAfterPrefix, "I");
  }
  return name;
}

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
  const auto index = static_cast<std::size_t>(call.collective) +
                     (call.request != nullptr ? static_cast<std::size_t>(Collective::count) : 0);
  if (choices->said.test(index)) {
    return;
  }
  choices->said.set(index);
  CUMPI_LOG(info, "%s on device buffers of a communicator of %d ranks on %d node%s takes %s%s%s",
            call_name(call).c_str(), context.size(), context.nodes(), context.nodes() == 1 ? "" : "s", chosen.name(),
            reasons.empty() ? "" : " (", reasons.empty() ? "" : (reasons + ")").c_str());
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
  if (ordered_.size() > AgreementBoard::kMostAlgorithms) {
    CUMPI_LOG(error, "%zu collective algorithms, the board's offers hold %u", ordered_.size(),
              AgreementBoard::kMostAlgorithms);
    std::abort();
  }
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
// payload (none where `may_offer` is false). Why the others did not, in `why`.
unsigned offers_of(const std::vector<Algorithm*>& ordered, const std::vector<std::size_t>& offsets,
                   const protocol::CommContext& context, CollectiveCall* call, AgreementBoard* board, bool may_offer,
                   std::vector<std::string>* why) {
  unsigned offers = 0;
  for (std::size_t i = 0; i < ordered.size(); ++i) {
    Algorithm* algorithm = ordered[i];
    std::string& why_not = (*why)[i];
    if (algorithm->runs_beside_host_ranks()) {
      continue;
    }
    if (board == nullptr) {
      why_not = call->request != nullptr
                    ? "a nonblocking call on a communicator without an agreement board (it is made at the first "
                      "blocking collective of the seam there)"
                    : "needs every rank's buffers on a device, and this communicator has no agreement board (ranks "
                      "on several nodes, one rank, an inter-communicator, or no shared memory)";
    } else if (!may_offer) {
      why_not = call->request != nullptr && config().coll_start_wait == 0
                    ? "a nonblocking call, and CUMPI_COLL_START_WAIT is 0"
                    : "a nonblocking call while another rank is kDecisionRing calls behind on this communicator";
    } else if (algorithm->takes(context, *call, &why_not) &&
               algorithm->offer(*call, static_cast<char*>(board->own_payload()) + offsets[i], &why_not)) {
      offers |= 1U << i;
    }
  }
  return offers;
}

// Blocking calls wait for every rank's announcement; nonblocking ones, whose
// start is local, a bounded time (CUMPI_COLL_START_WAIT).
unsigned agree_on(AgreementBoard* board, const CollectiveCall& call, unsigned offers) {
  if (offers == 0) {
    return 0;
  }
  if (call.request == nullptr) {
    return board->agree(call.agreed_call, offers, polite_wait());
  }
  constexpr double kMicrosecond = 1e-6;
  return board->agree_within(call.agreed_call, offers, static_cast<double>(config().coll_start_wait) * kMicrosecond,
                             polite_wait());
}

}  // namespace

namespace {

// Where every rank offered but none of the offered algorithms runs (their
// offers did not allow it): a rank must not announce its next call, writing
// its payload, while another still reads this call's; one step holds them.
void leave_agreed_call(AgreementBoard* board, const CollectiveCall& call, unsigned agreed) {
  if (agreed != 0) {
    board->arrive(call.agreed_call, 1, true);
    board->wait_all(call.agreed_call, 1, polite_wait());
  }
}

}  // namespace

Algorithm& Selection::choose(const protocol::CommContext& context, CollectiveCall* call, AgreementBoard* board,
                             std::string* reasons) const {
  std::vector<std::string> why(ordered_.size());
  const bool may_offer =
      board != nullptr && (call->request == nullptr || (config().coll_start_wait > 0 && board->may_decide_next()));
  const unsigned offers = offers_of(ordered_, offsets_, context, call, board, may_offer, &why);
  unsigned agreed = 0;
  if (board != nullptr) {
    call->board = board;
    call->agreed_call = board->announce(offers);
    agreed = agree_on(board, *call, offers);
  }
  for (std::size_t i = 0; i < ordered_.size(); ++i) {
    Algorithm* algorithm = ordered_[i];
    call->payload_offset = offsets_[i];
    if (!algorithm->runs_beside_host_ranks() && (agreed & (1U << i)) != 0 && algorithm->accepts(*call, &why[i])) {
      return *algorithm;
    }
    if (algorithm->runs_beside_host_ranks() && algorithm->takes(context, *call, &why[i])) {
      leave_agreed_call(board, *call, agreed);
      return *algorithm;
    }
    if (why[i].empty()) {
      why[i] = "not every rank could take it (host buffers, or a decline, on some rank)";
    }
    if (reasons != nullptr) {
      *reasons += (reasons->empty() ? "" : "; ") + std::string(algorithm->name()) + ": " + why[i];
    }
  }
  leave_agreed_call(board, *call, agreed);
  return staged_algorithm();
}

Selection& selection() {
  static Selection* selected = new Selection();  // lives until exit
  return *selected;
}

Status run_collective(CollectiveCall call) {
  bool in_steps = false;
  Status status = run_if_hierarchical(call, &in_steps);
  if (in_steps) {
    return status;
  }
  const std::shared_ptr<protocol::CommContext> context = protocol::context_of(call.comm, &status);
  if (context == nullptr) {
    return status;
  }
  AgreementBoard* board =
      call.request == nullptr ? agreement_board(*context, call.comm, &status) : existing_board(*context);
  if (!status.is_ok()) {
    return status;
  }
  // The reasons are joined only where they may be logged: strings on every call cost.
  std::string reasons;
  Algorithm& chosen = selection().choose(*context, &call, board, log::enabled(log::Level::info) ? &reasons : nullptr);
  log_choice_once(*context, call, chosen, reasons);
  CUMPI_LOG(debug, "%s of %d elements on a communicator of %d ranks: %s", call_name(call).c_str(),
            call.send_count != 0 ? call.send_count : call.recv_count, context->size(), chosen.name());
  (chosen.runs_beside_host_ranks() ? g_staged : g_on_gpu).fetch_add(1, std::memory_order_relaxed);
  if (call.request == nullptr || chosen.runs_beside_host_ranks()) {
    return chosen.run(call);
  }
  // A nonblocking call every rank started within the wait: they are all in
  // it now, so it runs to the end here, as the blocking call does (its
  // staged fallback too), and the request is complete when given.
  MPI_Request* request = call.request;
  call.request = nullptr;
  status = chosen.run(call);
  return status.is_ok() ? protocol::track_completed(request, call.comm) : status;
}

CollectiveCounts collective_counts() {
  return CollectiveCounts{g_on_gpu.load(std::memory_order_relaxed), g_staged.load(std::memory_order_relaxed)};
}

}  // namespace cumpi::coll
