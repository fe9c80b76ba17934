// Which ranks may send this rank envelopes (rendezvous envelopes and short
// envelopes' tokens), and which ranks let this rank send them some.
//
// A host receive posted straight into the user's memory can take an envelope
// safely unless another pending receive lands in overlapping memory: MPI may
// then write a second message over the envelope before cumpi reads it (a
// window of receives into one buffer is the usual case). A rank therefore
// grants a peer envelopes only while no two of its pending direct receives
// overlap (host_receives.h), and once it granted one, a new receive that
// overlaps a pending one lands privately. Until a peer granted, device
// messages to it go eagerly, in plain MPI format, which any receive takes.
//
// The request and the grant travel on the private channel under their own
// tag. Jobs without device messages never send one: their host receives
// then never land privately.
#pragma once

namespace cumpi::protocol {

// At MPI_Init (the channel is open) and MPI_Finalize (before it closes:
// unanswered messages are taken off the channel).
void start_grants(int world_size);
void stop_grants();

// Sender: true once world rank `peer` granted this rank envelopes. The
// first call asks it; until it answers, false (the message goes eagerly).
bool may_send_envelopes_to(int peer);

// Receiver: a grant was given or is waiting to be given, so envelopes may
// arrive in host receives.
bool envelopes_may_arrive();

// Takes grant requests and grants off the channel and answers what can be
// answered now. Cheap when nothing arrived; `serve_grants_now` always
// looks, `serve_grants` one call in kServeEvery (it runs on busy paths).
void serve_grants_now();
void serve_grants();

}  // namespace cumpi::protocol
