#pragma once
// The streamed replay: a schedule replayed from its per-device order streams
// (schedules/order_stream.h) without ever holding the table or its timings, for tables too large
// for memory (docs/engine.md, "Streamed replay"). It is the list replay (list_replay.h) of a
// plain table: one pass of list scheduling over the per-device orders, each device reading its
// order in small chunks. End times are kept per (kind, stage) only for the microbatches some op
// still needs, and a microbatch's entry is dropped once its last consumer ran, so memory is the
// devices' read buffers plus the microbatches in flight, not the op count. Metrics are
// accumulated as ops end; no per-op timing is kept (SimulationResult::timings stays empty).
//
// It gives exactly the metrics, peaks, exposed communication and event count of a replay of the
// materialized table (tests/engine/stream_replay_test.cpp), for what the list replay's tight loop
// covers: no copies, no observer, no gradient sync, no memory budget, no sampled durations,
// asynchronous sends, and a network without links (the idealized replay or a fixed delay).
// Stragglers (EngineInput::compute_slowdown) and whole iterations are replayed.

#include <string>

#include "schedules/order_stream.h"
#include "sim/engine/engine_input.h"
#include "sim/engine/simulation_result.h"

namespace bubblesim {

/// "" when `in` can be replayed from a stream, else what prevents it ("a memory budget (the
/// out-of-memory report needs the event loop)"), for messages.
std::string why_not_streamable(const EngineInput& in);

/// Replays `order` with the settings of `in` (in.table is ignored: the order's shape is the
/// table). Throws std::invalid_argument when why_not_streamable(in) is not empty, and
/// std::logic_error when the order breaks the stream's premise (order_stream.h).
SimulationResult simulate_streamed(const EngineInput& in, const OrderStream& order);

}  // namespace bubblesim
