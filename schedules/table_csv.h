#pragma once
// bubblesim's own table CSV: one row per op with explicit columns, so any Table (replicas,
// recompute, offload, fused ops) round-trips.
//
//   # bubblesim table: devices=4 stages=8 chunks=2 microbatches=10     (optional shape line)
//   device,position,kind,stage,microbatch,backward_stage,backward_microbatch,start_s,end_s
//   0,0,F,0,0,,,0,0.0185
//
// kind is the op letter (F B W R O L, X = fused F&B with backward_stage/backward_microbatch);
// start_s/end_s are the op's times in the idealized replay when written by the tool and ignored
// when read. Rows may come in any order; position orders a device's ops. Without the shape line,
// devices/stages/microbatches are one past the largest index and chunks is stages / devices when
// that divides evenly. Placement is inferred from the forwards: microbatches whose stages sit on
// the same devices share a replica.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "schedules/table.h"
#include "sim/units/time.h"

namespace bubblesim {

/// Per device, per position: (start, end) of each op; may be empty (columns left blank).
using OpTimes = std::vector<std::vector<std::pair<Time, Time>>>;

std::string write_table_csv(const Table& table, const OpTimes& times = {});

/// Throws InputError listing every bad row (FILE:LINE:COL) and placement conflict.
Table read_table_csv(std::string_view text, const std::string& file);

}  // namespace bubblesim
