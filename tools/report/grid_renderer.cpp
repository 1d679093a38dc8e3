#include "tools/report/grid_renderer.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace bubblesim {
namespace {

std::vector<std::vector<std::int32_t>> local_chunks(const Table& table) {
  // chunk[device][stage] = index of the stage among the stages the device holds, or -1.
  std::vector<std::vector<std::int32_t>> chunk(
      static_cast<std::size_t>(table.devices),
      std::vector<std::int32_t>(static_cast<std::size_t>(table.stages), -1));
  std::vector<std::vector<bool>> holds(
      chunk.size(), std::vector<bool>(static_cast<std::size_t>(table.stages), false));
  for (const auto& map : table.placement.device_of_stage) {
    for (std::size_t s = 0; s < map.size(); ++s) holds[static_cast<std::size_t>(map[s])][s] = true;
  }
  for (std::size_t d = 0; d < chunk.size(); ++d) {
    std::int32_t next = 0;
    for (std::size_t s = 0; s < holds[d].size(); ++s)
      if (holds[d][s]) chunk[d][s] = next++;
  }
  return chunk;
}

}  // namespace

std::string render_grid(const Table& table, const SimulationResult& ideal, std::size_t max_slots) {
  std::int64_t unit = 0;
  Time makespan = ideal.metrics.makespan;
  for (const auto& row : ideal.timings) {
    for (const OpTiming& t : row) {
      std::int64_t d = (t.end - t.start).ps();
      if (d > 0) unit = std::gcd(unit, d);
      unit = std::gcd(unit, t.start.ps());
    }
  }
  if (unit <= 0 || makespan <= Time::zero()) return "(empty schedule)\n";
  std::int64_t slots = makespan.ps() / unit;
  if (slots > static_cast<std::int64_t>(max_slots)) {
    unit = (makespan.ps() + static_cast<std::int64_t>(max_slots) - 1) /
           static_cast<std::int64_t>(max_slots);
    slots = (makespan.ps() + unit - 1) / unit;
  }
  auto chunk = local_chunks(table);
  std::vector<std::int32_t> chunks_on_device(chunk.size(), 0);
  for (std::size_t d = 0; d < chunk.size(); ++d) {
    for (std::int32_t c : chunk[d]) chunks_on_device[d] = std::max(chunks_on_device[d], c + 1);
  }
  auto label = [&](std::size_t d, const Op& op) {
    auto part = [&](char kind, std::int32_t s, std::int32_t j) {
      std::string l = fmt::format("{}{}", kind, j);
      if (chunks_on_device[d] > 1) l += fmt::format("/{}", chunk[d][static_cast<std::size_t>(s)]);
      return l;
    };
    if (op.kind == OpKind::ForwardBackward) {
      return part('F', op.stage, op.microbatch) + "&" +
             part('B', op.backward_stage, op.backward_microbatch);
    }
    return part(op_kind_letter(op.kind), op.stage, op.microbatch);
  };
  std::vector<std::vector<std::string>> grid(
      chunk.size(), std::vector<std::string>(static_cast<std::size_t>(slots)));
  std::size_t width = 1;
  for (std::size_t d = 0; d < grid.size(); ++d) {
    for (std::size_t i = 0; i < table.device_ops[d].size(); ++i) {
      const OpTiming& t = ideal.timings[d][i];
      if (t.end <= t.start) continue;
      std::string l = label(d, table.device_ops[d][i]);
      width = std::max(width, l.size());
      std::int64_t first = t.start.ps() / unit, last = (t.end.ps() + unit - 1) / unit;
      for (std::int64_t s = first; s < last && s < slots; ++s)
        grid[d][static_cast<std::size_t>(s)] = l;
    }
  }
  std::string out =
      fmt::format("slot = {}; {} slots; makespan {}\n", Time::from_ps(unit), slots, makespan);
  for (std::size_t d = 0; d < grid.size(); ++d) {
    std::string row = fmt::format("dev {:>{}} |", d, fmt::format("{}", grid.size() - 1).size());
    for (const std::string& cell : grid[d]) {
      row += fmt::format(" {:<{}}", cell.empty() ? "." : cell, width);
    }
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out += row + "\n";
  }
  return out;
}

std::string table_grid_report(const std::string& schedule, const Table& table,
                              const SimulationResult& ideal) {
  return fmt::format(
             "{} on {} devices, {} stages, {} microbatches (idealized: scenario costs, no "
             "communication)\n",
             schedule, table.devices, table.stages, table.microbatches) +
         render_grid(table, ideal);
}

}  // namespace bubblesim
