// PassDecision (schedules/passes/pass_decision.h): the reports' line for each kind of pass, and
// the names the JSON report's `passes` carry.
#include "schedules/passes/pass_decision.h"

#include <doctest/doctest.h>

using namespace bubblesim;

TEST_CASE("pass decisions: each kind names itself and summarises what it decided") {
  CHECK(pass_name(PassKind::Recompute) == "recompute");
  CHECK(pass_name(PassKind::Offload) == "offload");
  CHECK(pass_name(PassKind::A2aPairing) == "a2a pairing");

  PassDecision offload;
  offload.kind = PassKind::Offload;
  offload.policy = MemoryPolicy::Full;
  offload.count_per_device = {8, 4};
  offload.bytes_per_device = {Bytes(8LL << 30), Bytes(4LL << 30)};
  offload.stages = {0, 1};
  offload.candidates = 24;
  CHECK(offload.is_memory_pass());
  CHECK(offload.summary() ==
        "offload pass (full): 12 of 24 activations on stages [0, 1], 12GiB moved");

  PassDecision recompute = offload;
  recompute.kind = PassKind::Recompute;
  CHECK(recompute.summary() ==
        "recompute pass (full): 12 of 24 activations on stages [0, 1], 12GiB not stored");

  PassDecision pairing;
  pairing.kind = PassKind::A2aPairing;
  pairing.count_per_device = {3, 3};
  pairing.bytes_per_device = {Bytes::zero(), Bytes::zero()};
  pairing.candidates = 7;
  CHECK_FALSE(pairing.is_memory_pass());
  CHECK(pairing.summary() ==
        "a2a pairing (parallelism.a2a_overlap): 6 of 7 backward + next forward pairs run as "
        "overlapped F&B ops");
  pairing.rejected = 1;
  CHECK(pairing.summary() ==
        "a2a pairing (parallelism.a2a_overlap): 6 of 7 backward + next forward pairs run as "
        "overlapped F&B ops, 1 left apart (would deadlock)");
}
