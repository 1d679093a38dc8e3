#pragma once
// The list-scheduling kernel: the table's own rules for when an op may run, written once, for
// every replay that computes a table without the event loop and every check that reads the
// table's dependencies. The list replay's general and tight loops (sim/engine/list_replay.cpp,
// list_replay_plain.cpp), the streamed replay (sim/engine/stream_replay.cpp), the optimizer's
// timing model (schedules/optimizer/timing_model.cpp), the validator (schedules/validator.cpp),
// the all-to-all pairing (schedules/passes/a2a_pairing.cpp) and the event loop's op graph
// (sim/engine/op_graph.cpp) all use it; none of them lists producers itself.
//
// Three parts, lowest first:
//   the producer walk   for_each_producer: which ops an op waits for (docs/schedule-rules.md §2)
//                         F(s, j) after F(s-1, j)                          (an activation)
//                         B(s, j) after F(s, j), B(s+1, j), R(s, j), L(s, j) (B(s+1, j): a
//                         gradient) W(s, j) after B(s, j); R(s, j) and O(s, j) after F(s, j); L
//                         after O
//                       and its inverse, for_each_consumer. A fused F&B waits for both halves'
//                       producers. Only the activation and the gradient edge can join two
//                       devices; every other edge stays inside one (stage, microbatch).
//   the start rule      inputs_of + place: an op starts when its stream is free and its last
//                       input has arrived (replay_rules.h), against an end-time store.
//   the lane loop       run_lane: one device's order run as far as its inputs allow; sweep: every
//                       lane until none moves.
//
// The loop is a template over the parts that differ between its users, so it costs nothing at
// run time (everything inlines into one loop per user, as if written by hand):
//   Ends    the end-time store: `std::int64_t end(OpKind, stage, microbatch) const` (kPending
//           while the op has not run, kAbsent when the table has no such op) and
//           `void set(OpKind, stage, microbatch, std::int64_t end)`.
//   Lane    the lane source: `std::span<const Op> ahead()` (the ops the device can read now,
//           from its next one: the rest of a table row, a stream's buffered chunk; empty at the
//           end of its order), `void ran(i, const Slot&)` (op i of them was placed: its timing),
//           `void advance(n)` (n of them ran) and a LaneClock `clock`.
//   Policy  durations, arrivals and memory: `std::int64_t arrival(DependencyKind, producer stage,
//           microbatch, producer end)` for an edge that may cross devices,
//           `std::int64_t length(const Op&)`, `bool start(const Op&, const Slot&)` (memory and
//           checks when the op starts; false stops the lane before the op counts as run) and
//           `void ended(const Op&, const Slot&)` (after its end is stored: wake its consumers);
//           optionally `static constexpr std::uint32_t kKinds`, the kinds it places (kind_bit),
//           so that no loop body is made for the others.
// Inside the loop the op's kind is a constant (one loop body per kind), and the stream's free
// time is kept in a register while the rest of the clock stays in the lane: keeping more values
// in locals made the compiler spill the loop's own counters (measured on the plain 1F1B loop).
//
// tests/engine/replay_differential_test.cpp replays thousands of random cases through every user
// and requires them to agree exactly with the event loop.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <span>

#include "schedules/op.h"
#include "schedules/replay_rules.h"
#include "sim/units/time.h"

namespace bubblesim::list_scheduling {

/// End-time store answers besides a time (>= 0): the op has not run yet, or the table lacks it.
inline constexpr std::int64_t kPending = -1;
inline constexpr std::int64_t kAbsent = std::numeric_limits<std::int64_t>::min();

/// What an edge carries: nothing between devices (Local), an activation F(s-1) -> F(s) or a
/// gradient B(s+1) -> B(s).
enum class DependencyKind : std::uint8_t { Local, Activation, Gradient };

/// Calls sink(kind, stage, microbatch, dependency) for each producer of one half (F, B, W, R, O,
/// L) of an op of a table with `stages` stages. The producer may be absent from the table.
template <typename Sink>
[[gnu::always_inline]] constexpr void for_each_producer(OpKind kind, std::int32_t s, std::int32_t j,
                                                        std::int32_t stages, Sink&& sink) {
  switch (kind) {
    case OpKind::Forward:
      if (s > 0) sink(OpKind::Forward, s - 1, j, DependencyKind::Activation);
      break;
    case OpKind::Backward:
      sink(OpKind::Forward, s, j, DependencyKind::Local);
      if (s + 1 < stages) sink(OpKind::Backward, s + 1, j, DependencyKind::Gradient);
      sink(OpKind::Recompute, s, j, DependencyKind::Local);
      sink(OpKind::Reload, s, j, DependencyKind::Local);
      break;
    case OpKind::Weight:
      sink(OpKind::Backward, s, j, DependencyKind::Local);
      break;
    case OpKind::Recompute:
    case OpKind::Offload:
      sink(OpKind::Forward, s, j, DependencyKind::Local);
      break;
    case OpKind::Reload:
      sink(OpKind::Offload, s, j, DependencyKind::Local);
      break;
    case OpKind::ForwardBackward:
      break;  // a fused op: use the overload for whole ops
  }
}

/// The same for a whole op: both halves of a fused F&B (forward half first). The backward half's
/// own forward is left out when the forward half is it: the two halves of one op do not wait for
/// each other.
template <typename Sink>
[[gnu::always_inline]] constexpr void for_each_producer(const Op& op, std::int32_t stages,
                                                        Sink&& sink) {
  if (op.kind != OpKind::ForwardBackward) {
    for_each_producer(op.kind, op.stage, op.microbatch, stages, sink);
    return;
  }
  for_each_producer(OpKind::Forward, op.stage, op.microbatch, stages, sink);
  const bool twin = op.backward_stage == op.stage && op.backward_microbatch == op.microbatch;
  for_each_producer(OpKind::Backward, op.backward_stage, op.backward_microbatch, stages,
                    [&](OpKind k, std::int32_t s, std::int32_t j, DependencyKind d) {
                      if (!(twin && k == OpKind::Forward)) sink(k, s, j, d);
                    });
}

/// The inverse walk: sink(kind, stage, microbatch, dependency) for each op that waits for one
/// half (kind, s, j); for_each_producer of each of them names (kind, s, j).
template <typename Sink>
constexpr void for_each_consumer(OpKind kind, std::int32_t s, std::int32_t j, std::int32_t stages,
                                 Sink&& sink) {
  switch (kind) {
    case OpKind::Forward:
      if (s + 1 < stages) sink(OpKind::Forward, s + 1, j, DependencyKind::Activation);
      sink(OpKind::Backward, s, j, DependencyKind::Local);
      sink(OpKind::Recompute, s, j, DependencyKind::Local);
      sink(OpKind::Offload, s, j, DependencyKind::Local);
      break;
    case OpKind::Backward:
      if (s > 0) sink(OpKind::Backward, s - 1, j, DependencyKind::Gradient);
      sink(OpKind::Weight, s, j, DependencyKind::Local);
      break;
    case OpKind::Recompute:
    case OpKind::Reload:
      sink(OpKind::Backward, s, j, DependencyKind::Local);
      break;
    case OpKind::Offload:
      sink(OpKind::Reload, s, j, DependencyKind::Local);
      break;
    case OpKind::Weight:
    case OpKind::ForwardBackward:
      break;
  }
}

/// Calls half(kind, stage, microbatch) for each half of an op: its own for a plain op, F then B
/// for a fused F&B (whose end is both halves' end).
template <typename Half>
[[gnu::always_inline]] constexpr void for_each_half(const Op& op, Half&& half) {
  if (op.kind == OpKind::ForwardBackward) {
    half(OpKind::Forward, op.stage, op.microbatch);
    half(OpKind::Backward, op.backward_stage, op.backward_microbatch);
  } else {
    half(op.kind, op.stage, op.microbatch);
  }
}

/// The stage whose p2p bytes a cross-device dependency carries, from its producer's stage: the
/// lower of the two stages (an activation leaves stage s for s+1, a gradient stage s for s-1).
constexpr std::int32_t transfer_stage(DependencyKind kind, std::int32_t producer_stage) {
  return kind == DependencyKind::Activation ? producer_stage : producer_stage - 1;
}

/// What an op's inputs give: the latest producer end (`local`, the arrivals without
/// communication) and the latest arrival (`ready`), how many inputs arrived after their producer
/// ended (transfers in flight), and whether one has not run (the op waits).
struct Inputs {
  std::int64_t ready = 0, local = 0;
  std::uint32_t delayed = 0;
  bool pending = false;
};

/// The producer walk against an end-time store: `arrive(dependency, producer stage, microbatch,
/// end)` gives an activation's or a gradient's arrival; a local input arrives when it ends. An
/// absent producer is skipped; a pending one makes the op wait.
template <typename Ends, typename Arrive>
[[gnu::always_inline]] constexpr Inputs inputs_of(const Op& op, std::int32_t stages,
                                                  const Ends& ends, Arrive&& arrive) {
  // Scalars, not an Inputs captured by reference: they stay in registers once inlined.
  std::int64_t ready = 0, local = 0;
  std::uint32_t delayed = 0;
  bool pending = false;
  for_each_producer(
      op, stages,
      [&](OpKind k, std::int32_t s, std::int32_t j, DependencyKind d)
          __attribute__((always_inline)) {
            if (pending) return;
            const std::int64_t e = ends.end(k, s, j);
            if (e < 0) {  // times are never negative: not run yet, or no such op
              pending = pending || e == kPending;
              return;
            }
            const std::int64_t at = d == DependencyKind::Local ? e : arrive(d, s, j, e);
            delayed += at > e ? 1 : 0;
            local = std::max(local, e);
            ready = std::max(ready, at);
          });
  return Inputs{ready, local, delayed, pending};
}

/// One op placed on its stream: when the stream was free before it, its start and end, and the
/// part of its wait that was exposed communication.
struct Slot {
  std::int64_t free, start, end, exposed;
};

/// The start rule (replay_rules.h): the later of the stream's free time and the last arrival.
/// Throws OverflowError when the end is beyond the time range.
[[gnu::always_inline]] inline Slot place(std::int64_t stream_free, const Inputs& in,
                                         std::int64_t length) {
  const std::int64_t start = replay_rules::op_start(stream_free, in.ready);
  return Slot{stream_free, start, (Time::from_ps(start) + Time::from_ps(length)).ps(),
              replay_rules::exposed_wait(start, in.local, stream_free)};
}

/// What a lane accumulates as its ops run: when its stream is free, the busy and exposed time,
/// the first start (-1 before any op) and the inputs that arrived by transfer.
struct LaneClock {
  std::int64_t free = 0, busy = 0, exposed = 0, first_start = -1;
  std::uint64_t arrivals = 0;
};

/// Why run_lane stopped: the order ended, the next op waits for an input, or the policy refused
/// to start it (over a memory budget, a malformed op).
enum class LaneStop : std::uint8_t { End, Waiting, Refused };

/// One op kind in a policy's `kKinds` mask.
constexpr std::uint32_t kind_bit(OpKind k) { return 1u << static_cast<unsigned>(k); }

namespace detail {

/// Whether op i of the lane's ops ahead, of kind K, ran (false: it waits, or the policy refused
/// it; `stop` says which). The op is copied with its kind as the constant K, so that every branch
/// on the kind in the walk and in the policy folds away once inlined: one specialised loop body
/// per kind.
template <OpKind K, typename Lane, typename Ends, typename Policy>
[[gnu::always_inline]] inline bool run_op(Op op, std::size_t i, Lane& lane, Ends& ends,
                                          Policy& policy, std::int32_t stages, LaneClock& c,
                                          std::int64_t& free, LaneStop& stop) {
  op.kind = K;
  const Inputs in = inputs_of(
      op, stages, ends,
      [&](DependencyKind d, std::int32_t s, std::int32_t j, std::int64_t e)
          __attribute__((always_inline)) { return policy.arrival(d, s, j, e); });
  if (in.pending) {
    stop = LaneStop::Waiting;
    return false;
  }
  const Slot slot = place(free, in, policy.length(op));
  if (!policy.start(op, slot)) {
    stop = LaneStop::Refused;
    return false;
  }
  for_each_half(
      op, [&](OpKind k, std::int32_t s, std::int32_t j)
              __attribute__((always_inline)) { ends.set(k, s, j, slot.end); });
  if (c.first_start < 0) c.first_start = slot.start;
  c.busy += slot.end - slot.start;
  c.exposed += slot.exposed;
  c.arrivals += in.delayed;
  free = slot.end;
  policy.ended(op, slot);
  lane.ran(i, slot);
  return true;
}

/// The kinds a policy places: its `kKinds` (a mask of kind_bit) when it declares one, else all.
template <typename Policy>
constexpr std::uint32_t kinds_of() {
  if constexpr (requires { Policy::kKinds; })
    return Policy::kKinds;
  else
    return (1u << kOpKindCount) - 1;
}

/// Runs op i with its kind as a constant, trying the kinds in `Kinds` in the order below
/// (forwards, backwards and weights first: most tables hold nothing else, and a compare is
/// cheaper than a jump through a table). A kind outside `Kinds` is refused.
template <std::uint32_t Kinds, int N = 0, typename Lane, typename Ends, typename Policy>
[[gnu::always_inline]] inline bool dispatch(const Op& op, std::size_t i, Lane& lane, Ends& ends,
                                            Policy& policy, std::int32_t stages, LaneClock& c,
                                            std::int64_t& free, LaneStop& stop) {
  constexpr OpKind kOrder[] = {OpKind::Forward,   OpKind::Backward,        OpKind::Weight,
                               OpKind::Recompute, OpKind::ForwardBackward, OpKind::Offload,
                               OpKind::Reload};
  if constexpr (N == std::size(kOrder)) {
    stop = LaneStop::Refused;  // a kind the policy does not place
    return false;
  } else {
    constexpr OpKind K = kOrder[N];
    if constexpr ((Kinds & kind_bit(K)) != 0) {
      if (op.kind == K) return run_op<K>(op, i, lane, ends, policy, stages, c, free, stop);
    }
    return dispatch<Kinds, N + 1>(op, i, lane, ends, policy, stages, c, free, stop);
  }
}

}  // namespace detail

/// Runs `lane` from its next op as far as its inputs allow (see the header for the parts). The
/// stream's free time and the position in the ops ahead are kept in locals while the lane runs.
template <typename Lane, typename Ends, typename Policy>
[[gnu::always_inline]] inline LaneStop run_lane(Lane& lane, Ends& ends, Policy& policy,
                                                std::int32_t stages) {
  LaneClock& c = lane.clock;
  std::int64_t free = c.free;  // the critical chain: in a register
  LaneStop stop = LaneStop::End;
  for (bool blocked = false; !blocked;) {
    const std::span<const Op> ops = lane.ahead();
    if (ops.empty()) break;
    std::size_t i = 0;
    for (; i < ops.size(); ++i) {
      const bool ran = detail::dispatch<detail::kinds_of<Policy>()>(ops[i], i, lane, ends, policy,
                                                                    stages, c, free, stop);
      if (!ran) {
        blocked = true;
        break;
      }
    }
    lane.advance(i);
  }
  c.free = free;
  return stop;
}

/// Runs lanes 0..n-1 in sweeps that alternate direction (activations flow up the devices,
/// gradients down), `run_one(lane)` returning the ops it ran, until a sweep runs none. Returns
/// the ops run in all.
template <typename RunOne>
[[gnu::flatten]] inline std::uint64_t sweep(std::size_t n, RunOne&& run_one) {
  std::uint64_t total = 0;
  for (bool up = true;; up = !up) {
    std::uint64_t progress = 0;
    for (std::size_t visit = 0; visit < n; ++visit) progress += run_one(up ? visit : n - 1 - visit);
    total += progress;
    if (progress == 0) return total;  // done, or blocked for good (the caller checks)
  }
}

}  // namespace bubblesim::list_scheduling
