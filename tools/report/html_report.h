#pragma once
// The HTML report: one self-contained file (inline CSS, SVG and JS, nothing fetched) to compare a
// scenario's schedules. On top the verdict (verdict.h), the summary table of the three
// abstractions (formula, table, simulation) and the derived per-stage costs. Every timeline
// shares one time axis (a checkbox fits each to its own makespan; wheel zooms, drag pans), every
// memory chart one y-scale with over-budget stretches shaded, later chunks of a device lighter.
// Per schedule: a timeline of the simulation replay (devices as rows, one
// SVG rect per op coloured by kind F/B/W/R/O/L and fused F&B, labelled with its microbatch; idle
// time shows as gaps) and a memory-over-time plot per device with the budget line.
// The data is embedded as JSON and drawn by inline JS; every drawn op is an element with a
// `data-op` attribute, and when drawing is done the page sets `data-drawn-ops` and
// `data-table-ops` on <body> (and `data-errors` on <html> if a script error happened), so a
// headless browser can check it.

#include <string>
#include <vector>

#include "sim/engine/memory_timeline.h"
#include "tools/runner/scenario_runner.h"

namespace bubblesim {

/// `memory[i]` is the memory timeline of `result.runs[i]`'s simulation replay (nullptr: no plot).
/// `baseline`: the verdict's baseline schedule ("" = 1f1b when it ran; see verdict.h).
std::string render_html_report(const Scenario& scenario, const ScenarioRun& result,
                               const std::vector<const MemoryTimeline*>& memory,
                               const std::string& baseline = "");

}  // namespace bubblesim
