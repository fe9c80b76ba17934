#include "coll/selection.h"

#include <algorithm>
#include <bitset>
#include <memory>

#include "coll/staged_algorithm.h"
#include "runtime/log.h"

namespace cumpi::coll {

namespace {

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

void Selection::configure(const std::vector<std::string>& names) {
  ordered_.clear();
  for (const std::string& name : names) {
    if (name == staged_algorithm().name()) {
      ordered_.push_back(&staged_algorithm());
    }
  }
  if (std::find(ordered_.begin(), ordered_.end(), &staged_algorithm()) == ordered_.end()) {
    ordered_.push_back(&staged_algorithm());
  }
}

// Until ranks agree that every buffer of a call is on a device, an
// algorithm that cannot run beside host ranks is passed over: a rank with
// host buffers never enters the engine to take it.
Algorithm& Selection::choose(const protocol::CommContext& context, const CollectiveCall& call,
                             std::string* reasons) const {
  for (Algorithm* algorithm : ordered_) {
    std::string why_not;
    if (!algorithm->runs_beside_host_ranks()) {
      why_not = "needs every rank's buffers on a device";
    } else if (algorithm->takes(context, call, &why_not)) {
      return *algorithm;
    }
    *reasons += (reasons->empty() ? "" : "; ") + std::string(algorithm->name()) + ": " + why_not;
  }
  return staged_algorithm();
}

Selection& selection() {
  static Selection* selected = new Selection();  // lives until exit
  return *selected;
}

Status run_collective(const CollectiveCall& call) {
  Status status;
  const std::shared_ptr<protocol::CommContext> context = protocol::context_of(call.comm, &status);
  if (context == nullptr) {
    return status;
  }
  std::string reasons;
  Algorithm& chosen = selection().choose(*context, call, &reasons);
  log_choice_once(*context, call, chosen, reasons);
  return chosen.run(call);
}

}  // namespace cumpi::coll
