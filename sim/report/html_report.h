#pragma once
// The HTML report: one self-contained file (inline CSS, SVG and JS, nothing fetched) to compare a
// scenario's schedules. On top the verdict (verdict.h), the summary table of the three
// abstractions (formula, table, simulation), the derived per-stage costs and, with a topology,
// the topology graph with per-link busy time (html_topology.h). Every timeline
// shares one time axis (a checkbox fits each to its own makespan; wheel zooms, drag pans), every
// memory chart one y-scale with over-budget stretches shaded, later chunks of a device lighter.
// Per schedule: a timeline of the simulation replay (devices as rows, one
// SVG rect per op coloured by kind F/B/W/R/O/L and fused F&B, labelled with its microbatch; idle
// time shows as gaps) and a memory-over-time plot per device with the budget line. With MoE, a
// phase lane under each device and the experts' memory (html_moe_phases.h). Under every device
// a communication lane (html_comm_lanes.h); rows are labelled with the GPU and the pipeline
// stages it holds. After the verdict, a comparison chart of the schedules (html_comparison.h);
// with parallelism, the gradient sync tables of the text report (sync_tables.h).
// The data is embedded as JSON and drawn by inline JS; every drawn op is an element with a
// `data-op` attribute, and when drawing is done the page sets `data-drawn-ops` and
// `data-table-ops` on <body> (and `data-errors` on <html> if a script error happened), so a
// headless browser can check it.
// A long report (more than `max_ops` ops over all its schedules, `run --html-max-ops`) is
// aggregated (html_timeline_bins.h): a run over its share of the bound embeds per-device
// utilisation bins, drawn as a heat strip per device, plus the exact ops of its first stretch
// (full detail when zooming in there) and its memory as the maximum per bin; the page says so
// (`<p class="aggregated">`, `data-aggregated-runs` on <body>). Within the bound the page is
// exactly what it was without one.

#include <cstddef>
#include <string>
#include <vector>

#include "sim/engine/memory_timeline.h"
#include "sim/report/html_comm_lanes.h"
#include "sim/runner/scenario_runner.h"

namespace bubblesim {

/// Default bound on the ops a report embeds one by one (`run --html-max-ops`).
inline constexpr std::size_t kHtmlMaxOps = 100000;

/// `memory[i]` is the memory timeline of `result.runs[i]`'s simulation replay (nullptr: no plot).
/// `baseline`: the verdict's baseline schedule ("" = 1f1b when it ran; see verdict.h).
/// `max_ops`: beyond this many ops in all, long timelines are aggregated (see above).
/// `lanes_recorded[i]` recorded `result.runs[i]`'s sends and buckets for its communication lanes
/// (html_comm_lanes.h; nullptr or absent: the lanes show only what is inside the ops).
std::string render_html_report(const Scenario& scenario, const ScenarioRun& result,
                               const std::vector<const MemoryTimeline*>& memory,
                               const std::string& baseline = "", std::size_t max_ops = kHtmlMaxOps,
                               const std::vector<const CommLaneRecorder*>& lanes_recorded = {});

}  // namespace bubblesim
