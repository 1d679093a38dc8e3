#include "sim/report/idle_split_report.h"

#include <fmt/format.h>

#include "sim/report/html_escape.h"
#include "sim/report/metric_format.h"

namespace bubblesim {

const IdleSplit& idle_split_of(const ScheduleRun& run) {
  // The metric table asks for each part separately; a run is not changed while it is reported.
  struct Memo {
    const ScheduleRun* run = nullptr;
    std::uint64_t events = 0;
    Time makespan;
    std::size_t ops = 0;
    IdleSplit split;
  };
  thread_local Memo memo;
  const SimulationResult& sim = run.simulation;
  if (memo.run != &run || memo.events != sim.events || memo.makespan != sim.metrics.makespan ||
      memo.ops != run.op_count()) {
    memo = Memo{&run, sim.events, sim.metrics.makespan, run.op_count(),
                idle_split(run.table, run.stage_costs, sim)};
  }
  return memo.split;
}

IterationParts iteration_parts(const ScheduleRun& run, double iteration_s) {
  IterationParts out;
  out.compute_s = iteration_s;
  const IdleSplit& s = idle_split_of(run);
  const double whole =
      static_cast<double>(s.idle.size()) * run.simulation.metrics.makespan.seconds();
  if (!(whole > 0)) return out;
  auto part = [&](const std::vector<Time>& v) {
    return IdleSplit::total_seconds(v) / whole * iteration_s;
  };
  out.bubble_s = part(s.bubble);
  out.imbalance_s = part(s.imbalance);
  out.p2p_s = part(s.p2p);
  out.collectives_s = part(s.collectives);
  out.a2a_s = part(s.all_to_all);
  out.compute_s = iteration_s - part(s.idle);
  return out;
}

ReportRows idle_split_rows(const Verdict& verdict) {
  ReportRows out{{"idle split", "idle", "bubble", "imbalance", "p2p", "collectives", "all-to-all"},
                 {}};
  for (const RankedSchedule& r : verdict.ranked) {
    const IdleSplit& s = idle_split_of(*r.run);
    const Time makespan = r.run->simulation.metrics.makespan;
    if (s.idle.empty() || makespan <= Time::zero()) continue;
    const double whole = static_cast<double>(s.idle.size()) * makespan.seconds();
    auto share = [&](const std::vector<Time>& part) {
      return fmt::format("{:.1f}%", 100.0 * IdleSplit::total_seconds(part) / whole);
    };
    out.rows.push_back({r.run->label, share(s.idle), share(s.bubble), share(s.imbalance),
                        share(s.p2p), share(s.collectives), share(s.all_to_all)});
  }
  return out;
}

namespace {

/// The parts in drawing order, with their shade and legend name.
struct IdlePart {
  std::vector<Time> IdleSplit::*part;
  const char* name;
  const char* colour;
};
constexpr IdlePart kParts[] = {{&IdleSplit::bubble, "bubble", "#b0b0b0"},
                               {&IdleSplit::imbalance, "imbalance", "#e6a23c"},
                               {&IdleSplit::p2p, "p2p", "#409eff"},
                               {&IdleSplit::collectives, "collectives", "#8e44ad"},
                               {&IdleSplit::all_to_all, "all-to-all", "#e74c3c"}};

/// One bar: each part's seconds as its share of `whole` (the rest, computing, is left white).
std::string bar(const std::vector<double>& seconds, double whole, const std::string& title) {
  std::string h = "<div class=\"idle-bar\" title=\"" + escape_html(title) +
                  "\" style=\"display:flex;width:360px;height:10px;border:1px solid #ccc;"
                  "background:#fff\">";
  for (std::size_t i = 0; i < seconds.size(); ++i) {
    const double pct = whole > 0 ? 100.0 * seconds[i] / whole : 0.0;
    if (pct <= 0) continue;
    h += fmt::format("<span data-part=\"{}\" style=\"width:{:.3f}%;background:{}\"></span>",
                     kParts[i].name, pct, kParts[i].colour);
  }
  return h + "</div>";
}

}  // namespace

std::string idle_split_html(const Verdict& verdict) {
  std::string rows;
  for (const RankedSchedule& r : verdict.ranked) {
    const IdleSplit& s = idle_split_of(*r.run);
    const double makespan = r.run->simulation.metrics.makespan.seconds();
    if (s.idle.empty() || !(makespan > 0)) continue;
    const std::size_t devices = s.idle.size();
    std::vector<double> totals;
    std::string title = r.run->label + ":";
    for (const IdlePart& p : kParts) {
      totals.push_back(IdleSplit::total_seconds(s.*p.part));
      title += fmt::format(" {} {:.1f}%", p.name,
                           100.0 * totals.back() / (makespan * static_cast<double>(devices)));
    }
    rows += fmt::format("<tr><td>{}</td><td>all devices</td><td>{}</td></tr>\n",
                        escape_html(r.run->label),
                        bar(totals, makespan * static_cast<double>(devices), title));
    for (std::size_t d = 0; d < devices && devices <= 64; ++d) {
      std::vector<double> part;
      std::string t = fmt::format("{} device {}:", r.run->label, d);
      for (const IdlePart& p : kParts) {
        part.push_back((s.*p.part)[d].seconds());
        t += fmt::format(" {} {}", p.name, format_metric(MetricUnit::Seconds, part.back()));
      }
      rows += fmt::format("<tr class=\"idle-device\"><td></td><td>device {}</td><td>{}</td></tr>\n",
                          d, bar(part, makespan, t));
    }
  }
  if (rows.empty()) return "";
  std::string legend;
  for (const IdlePart& p : kParts) {
    legend += fmt::format(
        "<span style=\"display:inline-block;width:10px;height:10px;background:{};margin:0 4px "
        "0 10px\"></span>{}",
        p.colour, p.name);
  }
  return "<h3>idle time by cause (white: computing; docs/outputs.md)</h3>\n<p "
         "class=\"idle-legend\">" +
         legend + "</p>\n<table class=\"summary idle-split\"><tbody>\n" + rows +
         "</tbody></table>\n";
}

std::optional<std::string> stage_imbalance_warning(const Scenario& scenario,
                                                   const ScenarioRun& result) {
  const std::vector<StageCost>& stages = result.resolved.costs.stages;
  if (!scenario.model || !result.resolved.model_costs || stages.size() < 2) return std::nullopt;
  double sum = 0, most = 0;
  std::size_t largest = 0;
  for (std::size_t s = 0; s < stages.size(); ++s) {
    const StageCost& c = stages[s];
    const double t = (c.forward + c.backward_input + c.backward_weight).seconds();
    sum += t;
    if (t > most) {
      most = t;
      largest = s;
    }
  }
  const double mean = sum / static_cast<double>(stages.size());
  if (!(mean > 0) || most <= mean * (1.0 + kStageImbalanceWarning)) return std::nullopt;
  const std::string remedy =
      scenario.model->split.balanced
          ? "as even as whole layers allow (model.layers_per_stage: balanced); fewer stages or "
            "more layers per stage even them further"
          : "model.layers_per_stage: balanced places whole layers so that the stages' costs are "
            "as even as they allow";
  return fmt::format(
      "stage imbalance: stage {}'s F + B + W ({}) is {:.0f}% above the stages' mean ({}); {}",
      largest, format_metric(MetricUnit::Seconds, most), 100.0 * (most / mean - 1.0),
      format_metric(MetricUnit::Seconds, mean), remedy);
}

}  // namespace bubblesim
