#pragma once
// Whether a run replays a schedule from its order stream instead of a table in memory
// (docs/engine.md, "Streamed replay"). Scenario::stream (`run --stream`) decides:
//   auto  stream whenever it can (the same report, faster and smaller); otherwise hold the table,
//         or beyond --max-ops refuse it saying why a stream cannot replace it (the default)
//   on    always stream; an input error says why when it cannot
//   off   never; beyond --max-ops the table is refused as before
// It can be streamed when the generator emits its order as a stream (Generator::stream: 1f1b,
// interleaved-1f1b), nothing records every op (--trace, --html), no memory pass rewrites the
// table, no Monte Carlo samples, no MoE all-to-all costs, and the replays are ones the streamed
// replay covers (sim/engine/stream_replay.h: fixed delay, no budget, no gradient sync).

#include <memory>
#include <string>

#include "schedules/generator.h"
#include "sim/runner/resolve.h"

namespace bubblesim {

/// The stream to replay, or null to generate the table. Throws InputError (at the schedule
/// entry) for `on` when the schedule cannot be streamed, and for `auto` when the table is over
/// --max-ops and cannot be streamed (saying why); ScheduleConstraintError as generation does.
/// `observed`: something records every op of the simulation (a trace, an HTML report).
std::unique_ptr<OrderStream> open_stream(const ResolvedScenario& resolved,
                                         const Generator& generator, const ScheduleRequest& request,
                                         const GeneratorInput& in, bool observed);

/// Ops a streamed table may have (beyond it the table is refused as without a stream): each replay
/// takes seconds per 10^8 ops, so 2^34 ops are minutes.
constexpr std::uint64_t kMaxStreamedOps = std::uint64_t{1} << 34;

}  // namespace bubblesim
