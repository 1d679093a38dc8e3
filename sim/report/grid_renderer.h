#pragma once
// The device x time-slot grid of a table, drawn the way papers draw schedules: one row per
// device, one column per time slot of the idealized replay (scenario costs, no communication).
// A cell shows the op's kind and microbatch (F3, B3, W3); on devices holding several stages
// (interleaved, V, replicas) the local chunk follows a slash (F3/1); idle slots are '.'.

#include <optional>
#include <string>
#include <vector>

#include "schedules/stage_costs.h"
#include "schedules/table.h"
#include "sim/engine/simulation_result.h"

namespace bubblesim {

/// `ideal` is the idealized replay of `table`. At most `max_slots` columns: the slot is the
/// greatest common divisor of the op durations, widened when the grid would be wider, or `slot`
/// when given. When the labelled grid is wider than `text_width` (0: no limit), it is drawn with
/// one character per slot (the kind letter, labels over ops wide enough, a legend), at a slot
/// that fits `text_width` unless `slot` is given.
std::string render_grid(const Table& table, const SimulationResult& ideal,
                        std::size_t max_slots = 400, std::size_t text_width = 0,
                        std::optional<Time> slot = std::nullopt);

/// What `bubblesim table` prints: a line naming `schedule` and the table's shape, then the grid.
std::string table_grid_report(const std::string& schedule, const Table& table,
                              const SimulationResult& ideal, std::size_t text_width = 0,
                              std::optional<Time> slot = std::nullopt);

}  // namespace bubblesim
