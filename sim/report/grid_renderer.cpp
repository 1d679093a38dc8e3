#include "sim/report/grid_renderer.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "sim/report/text_table.h"

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

/// One character per slot: the op's kind letter, with its label (F12, B3/1) written over the
/// op's slots where it fits; '.' is idle. A legend line follows.
std::string compact_grid(const std::vector<std::vector<std::string>>& grid, std::int64_t unit,
                         std::int64_t slots, Time makespan, std::size_t prefix,
                         std::size_t text_width) {
  std::string out = fmt::format("slot = {}; {} slots, one character each; makespan {}\n",
                                Time::from_ps(unit), slots, makespan);
  for (std::size_t d = 0; d < grid.size(); ++d) {
    std::string row = fmt::format("dev {:>{}} |", d, prefix - 6);
    row += ' ';
    for (std::size_t s = 0; s < grid[d].size();) {
      const std::string& cell = grid[d][s];
      std::size_t run = 1;
      while (s + run < grid[d].size() && grid[d][s + run] == cell) ++run;
      if (cell.empty()) {
        row += std::string(run, '.');
      } else if (cell.size() <= run) {
        row += cell + std::string(run - cell.size(), cell[0]);
      } else {
        row += std::string(run, cell[0]);
      }
      s += run;
    }
    while (!row.empty() && row.back() == ' ') row.pop_back();
    out += row + "\n";
  }
  out += wrap_text(
      "legend: F forward, B backward, W weight gradient, R recompute, O offload, L reload, X "
      "fused F&B; a label (F12 = microbatch 12, /1 = chunk 1) where the op is wide enough; "
      ". idle",
      text_width, 8);
  return out;
}

}  // namespace

std::string render_grid(const Table& table, const SimulationResult& ideal, std::size_t max_slots,
                        std::size_t text_width, std::optional<Time> slot) {
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
  if (slot && slot->ps() > 0) unit = slot->ps();
  std::int64_t slots = (makespan.ps() + unit - 1) / unit;
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
  const std::size_t prefix = fmt::format("dev {} |", grid.size() - 1).size();
  const bool labelled =
      text_width == 0 || prefix + static_cast<std::size_t>(slots) * (width + 1) <= text_width;
  if (!labelled && !slot && text_width > prefix + 1 &&
      static_cast<std::size_t>(slots) > text_width - prefix - 1) {
    // One character per slot at a resolution that fits the width.
    const auto fit = static_cast<std::int64_t>(text_width - prefix - 1);
    // The smallest slot that fits, rounded up to three significant digits.
    std::int64_t step = (makespan.ps() + fit - 1) / fit, scale = 1;
    while (step / scale >= 1000) scale *= 10;
    step = (step + scale - 1) / scale * scale;
    return render_grid(table, ideal, max_slots, text_width, Time::from_ps(step));
  }
  if (!labelled) return compact_grid(grid, unit, slots, makespan, prefix, text_width);
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
                              const SimulationResult& ideal, std::size_t text_width,
                              std::optional<Time> slot) {
  return wrap_text(fmt::format("{} on {} devices, {} stages, {} microbatches (idealized: "
                               "scenario costs, no communication)",
                               schedule, table.devices, table.stages, table.microbatches),
                   text_width, 2) +
         render_grid(table, ideal, 400, text_width, slot);
}

}  // namespace bubblesim
