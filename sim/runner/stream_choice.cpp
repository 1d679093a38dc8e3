#include "sim/runner/stream_choice.h"

#include <fmt/format.h>

#include "sim/engine/stream_replay.h"
#include "sim/runner/op_bound.h"
#include "sim/runner/table_passes.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace {

/// What keeps the schedule from a streamed replay before its stream exists, or "".
std::string why_not_before(const ResolvedScenario& resolved, const Generator& generator,
                           bool observed) {
  const Scenario& scenario = *resolved.scenario;
  if (!generator.stream) return "its generator cannot emit its order as a stream";
  if (observed) return "--trace and --html record every op";
  for (const TablePass* pass : wanted_passes(resolved, resolved.costs.stages))
    if (pass->stream_refusal != nullptr) return std::string(pass->stream_refusal(resolved));
  if (scenario.variability) return "variability replays Monte Carlo samples of the table";
  if (scenario.communication.kind == CommunicationKind::Topology)
    return "the streamed replay does not cover a topology (flows may contend: the event loop "
           "decides)";
  for (const StageCost& c : resolved.costs.stages) {
    if (c.moe.a2a_forward > Time::zero() || c.moe.a2a_backward > Time::zero())
      return "the MoE all-to-all metrics read the whole table";
  }
  return "";
}

}  // namespace

std::unique_ptr<OrderStream> open_stream(const ResolvedScenario& resolved,
                                         const Generator& generator, const ScheduleRequest& request,
                                         const GeneratorInput& in, bool observed) {
  const Scenario& scenario = *resolved.scenario;
  if (scenario.command_line.stream == StreamMode::Off) return nullptr;
  const bool on = scenario.command_line.stream == StreamMode::On;
  const OpBound bound =
      minimum_ops(generator, request.params, scenario.stages, scenario.microbatches);
  const bool over = bound.ops > scenario.command_line.max_ops;
  // Past the virtual-stage bound, or too many ops even for a stream, the table is refused as
  // before (generate_from says why).
  if (bound.virtual_stages > kMaxVirtualStages ||
      static_cast<std::uint64_t>(bound.ops) > kMaxStreamedOps)
    return nullptr;
  // What cannot be streamed is held (auto within --max-ops), or refused with the reason.
  auto cannot = [&](const std::string& why) -> std::unique_ptr<OrderStream> {
    if (!on && !over) return nullptr;
    const std::string message =
        on ? fmt::format("{}: --stream on: it cannot be replayed as a stream: {}",
                         generator.info.name, why)
           : fmt::format(
                 "{}: {} need at least {} ops, more than the limit of {} (raise it with "
                 "--max-ops); a streamed replay, which holds no table, cannot replace it: {}",
                 generator.info.name, bound.shape, bound.ops, scenario.command_line.max_ops, why);
    throw InputError({Diagnostic{request.where, "schedules", message}});
  };
  if (std::string why = why_not_before(resolved, generator, observed); !why.empty())
    return cannot(why);
  std::unique_ptr<OrderStream> stream = generator.stream(in);
  const std::vector<StageCost> costs = resolved.costs.for_table(stream->shape().chunks);
  for (Replay replay : {Replay::Idealized, Replay::Simulated}) {
    const EngineInput engine_input = make_engine_input(resolved, stream->shape(), costs, replay);
    if (std::string why = why_not_streamable(engine_input); !why.empty())
      return cannot("the streamed replay does not cover " + why);
  }
  return stream;
}

}  // namespace bubblesim
