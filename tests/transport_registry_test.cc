// The transport registry: the order CUMPI_TRANSPORTS gives, the staged
// transport always there, and the sender's choice walking the order past
// transports that cannot carry a buffer.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "protocol/route_log.h"
#include "runtime/config.h"
#include "runtime/log.h"
#include "transport/registry.h"
#include "transport/staged/staged_transport.h"
#if CUMPI_TEST_HAVE_UCX
#include "transport/ucx/ucx_transport.h"
#endif

namespace cumpi::transport {
namespace {

// A transport that says what the test tells it to.
class ScriptedTransport final : public Transport {
 public:
  ScriptedTransport(bool sends, bool describes) : sends_(sends), describes_(describes) {}
  const char* name() const override { return "scripted"; }
  TransportId id() const override { return TransportId::cuda_ipc; }
  stats::Route route() const override { return stats::Route::ipc; }
  bool can_send(const Peer& peer) const override { return sends_ && peer.same_node; }
  std::size_t rendezvous_from() const override { return 256; }
  bool carries_short_messages() const override { return true; }
  bool describe(const Source&, const Message&, Blob* blob) override {
    ++described;
    blob->bytes[0] = 0x5a;
    return describes_;
  }
  std::unique_ptr<Transfer> start_send(const Source&, const Message&, const Blob&, Status*) override { return nullptr; }
  std::unique_ptr<Transfer> accept(const Message&, const Blob&, const Landing&, Decline* decline, Status*) override {
    decline->reason = "scripted";
    return nullptr;
  }
  int described = 0;

 private:
  bool sends_;
  bool describes_;
};

std::vector<std::string> names_of(const Registry& registry) {
  std::vector<std::string> names;
  for (const Transport* transport : registry.ordered()) names.emplace_back(transport->name());
  return names;
}

Message message_to(bool same_node) {
  Message message;
  message.bytes = 4096;
  message.peer = Peer{1, same_node, 0};
  return message;
}

TEST(TransportRegistry, KeepsTheConfiguredOrderAndAlwaysTheStagedTransport) {
  Registry registry;
  registry.configure({"cuda_ipc", "staged"});
  EXPECT_EQ(names_of(registry), (std::vector<std::string>{"cuda_ipc", "staged"}));
  registry.configure({"staged", "cuda_ipc"});
  EXPECT_EQ(names_of(registry), (std::vector<std::string>{"staged", "cuda_ipc"}));
  registry.configure({"cuda_ipc"});
  EXPECT_EQ(names_of(registry), (std::vector<std::string>{"cuda_ipc", "staged"}));
  registry.configure({});
  EXPECT_EQ(names_of(registry), std::vector<std::string>{"staged"});
  EXPECT_EQ(registry.find(TransportId::cuda_ipc), nullptr);
  EXPECT_EQ(registry.find(TransportId::staged), &staged_transport());
}

TEST(TransportRegistry, EveryNameTheConfigurationAcceptsIsATransport) {
  for (const std::string& name : known_transport_names()) {
    const Transport* transport = transport_named(name);
    if (name == "ucx" && CUMPI_TEST_HAVE_UCX == 0) {
      EXPECT_EQ(transport, nullptr);  // known everywhere, a transport only where built with UCX
      continue;
    }
    ASSERT_NE(transport, nullptr) << name;
    EXPECT_EQ(transport->name(), name);
  }
  EXPECT_EQ(transport_named("verbs"), nullptr);
}

TEST(TransportRegistry, TheSenderTakesTheFirstTransportThatDescribesTheBuffer) {
  ScriptedTransport willing(true, true);
  Registry registry;
  registry.use({&willing});
  Blob blob;
  EXPECT_EQ(&registry.choose_for_send(Source{}, message_to(true), &blob), &willing);
  EXPECT_EQ(blob.bytes[0], 0x5a);
  EXPECT_EQ(&registry.likely_for(Peer{1, true, 0}), &willing);
}

TEST(TransportRegistry, TransportsThatCannotCarryTheBufferArePassedOver) {
  ScriptedTransport cannot_export(true, false);
  Registry registry;
  registry.use({&cannot_export});
  Blob blob;
  EXPECT_EQ(&registry.choose_for_send(Source{}, message_to(true), &blob), &staged_transport());
  EXPECT_EQ(cannot_export.described, 1);
  // Another node: not even asked to describe.
  EXPECT_EQ(&registry.choose_for_send(Source{}, message_to(false), &blob), &staged_transport());
  EXPECT_EQ(cannot_export.described, 1);
  EXPECT_EQ(&registry.likely_for(Peer{1, false, 0}), &staged_transport());
}

TEST(TransportRegistry, StagedFirstTakesEverything) {
  ScriptedTransport willing(true, true);
  Registry registry;
  registry.use({&staged_transport(), &willing});
  Blob blob;
  EXPECT_EQ(&registry.choose_for_send(Source{}, message_to(true), &blob), &staged_transport());
  EXPECT_EQ(willing.described, 0);
}

TEST(RouteLog, SaysEachRouteOncePerPeerAndDirection) {
  using protocol::Direction;
  using protocol::log_route_once;
  log::set_level(log::Level::warn);
  EXPECT_FALSE(log_route_once(Direction::to, 91, "cuda_ipc", ""));  // below info: nothing, not even remembered
  log::set_level(log::Level::info);
  EXPECT_TRUE(log_route_once(Direction::to, 91, "cuda_ipc", ""));
  EXPECT_FALSE(log_route_once(Direction::to, 91, "cuda_ipc", ""));
  EXPECT_TRUE(log_route_once(Direction::from, 91, "cuda_ipc", ""));
  EXPECT_TRUE(log_route_once(Direction::to, 91, "staged", ""));
  EXPECT_TRUE(log_route_once(Direction::to, 92, "cuda_ipc", ""));
  log::set_level(log::Level::warn);
}

#if CUMPI_TEST_HAVE_UCX
// By default ucx serves other nodes only; listed before cuda_ipc (or
// without it), this node's ranks too.
TEST(TransportRegistry, ThisNodeTakesUcxOnlyWhereListedBeforeCudaIpc) {
  Registry registry;
  const Peer here{1, true, 0};
  const Peer elsewhere{1, false, 0};
  registry.configure({"cuda_ipc", "ucx", "staged"});
  EXPECT_FALSE(ucx_transport().can_send(here));
  const bool reachable = ucx_transport().can_send(elsewhere);
  registry.configure({"ucx", "cuda_ipc"});
  EXPECT_EQ(ucx_transport().can_send(here), reachable);
  registry.configure({"ucx"});
  EXPECT_EQ(ucx_transport().can_send(here), reachable);
  registry.configure({"cuda_ipc", "ucx", "staged"});  // as the other tests expect
}
#endif

}  // namespace
}  // namespace cumpi::transport
