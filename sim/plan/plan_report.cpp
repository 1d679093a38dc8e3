// The plan's text, Markdown and CSV reports and the rows and sentences every format shares.
#include "sim/plan/plan_report.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "sim/plan/plan_axes.h"
#include "sim/report/markdown_escape.h"
#include "sim/report/markdown_table.h"
#include "sim/report/metric_format.h"
#include "sim/report/text_report.h"
#include "sim/report/text_table.h"

namespace bubblesim {
namespace {

std::string pct(double fraction) { return fmt::format("{:.1f}%", 100.0 * fraction); }
std::string gib_text(double bytes) { return fmt::format("{:.2f}", to_gib(bytes)); }
std::string count(std::int64_t n) {
  std::string digits = std::to_string(n), out;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

// A time with 3 significant digits in a unit that suits it: "284 ms", "1.25 s", "45.1 us".
std::string short_time(double s) {
  const double a = std::fabs(s);
  if (a >= 1.0) return fmt::format("{:.3g} s", s);
  if (a >= 1e-3) return fmt::format("{:.3g} ms", s * 1e3);
  return fmt::format("{:.3g} us", s * 1e6);
}

// "-3.1%": how far the estimate was from the replay.
std::string error_of(const PlanCandidate& c) {
  if (!c.estimate || !c.replay || !(c.replay->iteration_s > 0)) return "-";
  return fmt::format("{:+.1f}%", 100.0 * (c.estimate->iteration_s - c.replay->iteration_s) /
                                     c.replay->iteration_s);
}

}  // namespace

ReportRows plan_ranked_rows(const PlanResult& r) {
  ReportRows out{
      {"rank", "layout", "variant", "schedule", "tokens/s per GPU", "MFU", "iteration s",
       "peak GiB", "of budget", "estimate", "compute", "bubble", "exposed comm", "imbalance"},
      {}};
  for (std::size_t k = 0; k < r.ranked.size(); ++k) {
    const PlanCandidate& c = r.candidates[r.ranked[k]];
    const PlanReplay& p = *c.replay;
    const double t = p.iteration_s;
    out.rows.push_back(
        {std::to_string(k + 1), c.family, c.variant, c.schedule,
         p.tokens_per_s_per_gpu ? fmt::format("{:.0f}", *p.tokens_per_s_per_gpu) : "-",
         p.mfu ? pct(*p.mfu) : "-", fmt::format("{:.4f}", t), gib_text(p.peak_memory_bytes),
         p.memory_budget_bytes > 0
             ? fmt::format("{:.0f}%", 100.0 * p.peak_memory_bytes / p.memory_budget_bytes)
             : "-",
         error_of(c), pct(p.compute_s / t), pct(p.bubble_s / t), pct(p.exposed_comm_s() / t),
         pct(p.imbalance_s / t)});
  }
  return out;
}

std::vector<std::string> plan_reasons(const PlanResult& r) {
  std::vector<std::string> out;
  for (std::size_t k = 0; k + 1 < r.ranked.size(); ++k) {
    const PlanReplay& a = *r.candidates[r.ranked[k]].replay;
    const PlanReplay& b = *r.candidates[r.ranked[k + 1]].replay;
    const double gain = b.iteration_s - a.iteration_s;
    // Per part of the iteration, what the next one spends more on (positive: this one saves it).
    std::vector<std::pair<double, std::string>> parts = {
        {b.bubble_s - a.bubble_s, "bubble"},
        {b.exposed_comm_s() - a.exposed_comm_s(), "exposed communication"},
        {b.imbalance_s - a.imbalance_s, "imbalance"},
        {b.compute_s - a.compute_s, "compute"}};
    std::stable_sort(parts.begin(), parts.end(),
                     [](const auto& x, const auto& y) { return x.first > y.first; });
    const double floor = std::max(0.05 * gain, 1e-6);  // parts below it do not explain much
    std::vector<std::string> saves;
    for (const auto& [delta, name] : parts) {
      if (delta >= floor && saves.size() < 2) saves.push_back(short_time(delta) + " less " + name);
    }
    std::string reason =
        fmt::format("#{} beats #{} by {} per iteration ({:.1f}%)", k + 1, k + 2, short_time(gain),
                    b.iteration_s > 0 ? 100.0 * gain / b.iteration_s : 0.0);
    if (!saves.empty()) reason += fmt::format(": {}", fmt::join(saves, ", "));
    const auto& [cost, name] = parts.back();  // the part it pays more for, if any
    if (-cost >= floor)
      reason +=
          fmt::format("{} {} more {}", saves.empty() ? ":" : ", despite", short_time(-cost), name);
    out.push_back(std::move(reason));
  }
  return out;
}

std::vector<std::string> plan_summary(const PlanResult& r) {
  std::vector<std::string> out;
  out.push_back(fmt::format("plan {}: {} on {} {} GPUs ({} per node), global batch {} x {} tokens",
                            r.job.name, r.job.model, r.job.gpus, r.job.gpu, r.job.gpus_per_node,
                            r.job.global_batch, r.job.seq_len));
  std::vector<std::string> knobs;
  for (std::size_t i = 0; i < plan_axes().size() && i < r.search.size(); ++i) {
    std::vector<std::string> values = r.search[i];
    if (plan_axes()[i].stage == AxisStage::Schedule)
      for (std::string& v : values) v = schedule_entry_label(v);
    knobs.push_back(fmt::format("{} {}", plan_axes()[i].name, fmt::join(values, ", ")));
  }
  out.push_back("searched: " + fmt::format("{}", fmt::join(knobs, "; ")) +
                "; dp = GPUs / (tp x pp x cp)");
  std::map<PlanRejection, std::int64_t> by;
  std::int64_t estimated = 0, families = 0;
  std::map<std::string, bool> seen;
  for (const PlanCandidate& c : r.candidates) {
    if (c.estimate)
      ++estimated;
    else
      ++by[c.rejection];
    if (seen.emplace(c.family, true).second) ++families;
  }
  std::vector<std::string> rejected;
  for (PlanRejection k :
       {PlanRejection::Divisibility, PlanRejection::Memory, PlanRejection::Infeasible,
        PlanRejection::Invalid, PlanRejection::NotEvaluated}) {
    if (by[k] > 0) rejected.push_back(fmt::format("{} {}", count(by[k]), plan_rejection_name(k)));
  }
  std::int64_t replayed = static_cast<std::int64_t>(r.ranked.size() + r.failed.size());
  out.push_back(fmt::format(
      "{} candidates in {} parallel layouts; rejected: {}; {} estimated ({} scenarios loaded); "
      "{} replayed in full{}",
      count(static_cast<std::int64_t>(r.candidates.size())), count(families),
      rejected.empty() ? "none" : fmt::format("{}", fmt::join(rejected, ", ")), count(estimated),
      count(r.loads), count(replayed),
      r.failed.empty() ? "" : fmt::format(" ({} failed)", r.failed.size())));
  if (r.excluded_by_constraints > 0)
    out.push_back(fmt::format("{} combinations left out by the plan's constraints",
                              count(r.excluded_by_constraints)));
  if (r.agreement.samples > 0) {
    out.push_back(fmt::format(
        "estimate against replay: median error {}, largest {}, rank correlation {:.2f} over {} "
        "layouts",
        pct(r.agreement.median_abs_error), pct(r.agreement.max_abs_error),
        r.agreement.rank_correlation, r.agreement.samples));
  }
  if (!r.time_budget_note.empty()) out.push_back("time budget: " + r.time_budget_note);
  return out;
}

ReportRows plan_rejected_rows(const PlanResult& r) {
  ReportRows out{{"rejected layout", "why", "candidates", "the nearest candidate's reason"}, {}};
  for (const PlanRejectedFamily& f : r.rejected_families)
    out.rows.push_back({f.family, std::string(plan_rejection_name(f.rejection)),
                        std::to_string(f.candidates), f.reason});
  return out;
}

std::string plan_report_text(const PlanResult& r, std::size_t width) {
  std::string out;
  for (const std::string& line : plan_summary(r)) out += wrap_text(line, width, 2);
  out += "\n";
  if (r.ranked.empty()) {
    out += "No layout ran without failing.\n";
  } else {
    out += wrap_text(
        "Ranked by the replay (tokens/s per GPU); the iteration split in % of the iteration "
        "time; estimate: its error against the replay:",
        width);
    const ReportRows rows = plan_ranked_rows(r);
    TextTable t(rows.header);
    t.align_left(1);
    t.align_left(2);
    t.align_left(3);
    t.repeat_leading(2);
    for (const auto& row : rows.rows) t.add_row(row);
    out += t.render(width) + "\n";
    for (const std::string& line : plan_reasons(r)) out += wrap_text(line, width, 2);
    out += "\n";
  }
  if (!r.failed.empty()) {
    out += "Replayed but failed:\n";
    for (std::size_t i : r.failed) {
      const PlanCandidate& c = r.candidates[i];
      out += wrap_text(fmt::format("  {}: {}: {}", c.label, c.replay->status, c.replay->failure),
                       width, 4);
    }
    out += "\n";
  }
  if (!r.estimated_only.empty()) {
    out += "Best estimates not replayed:\n";
    TextTable t({"layout", "variant", "schedule", "estimated s", "peak GiB"});
    t.align_left(1);
    t.align_left(2);
    for (std::size_t i : r.estimated_only) {
      const PlanCandidate& c = r.candidates[i];
      t.add_row({c.family, c.variant, c.schedule, fmt::format("{:.4f}", c.estimate->iteration_s),
                 gib_text(c.estimate->peak_memory_bytes)});
    }
    out += t.render(width) + "\n";
  }
  const ReportRows rejected = plan_rejected_rows(r);
  if (!rejected.rows.empty()) {
    out += "Layouts with no candidate left:\n";
    TextTable t(rejected.header);
    t.align_left(1);
    t.align_left(3);
    for (const auto& row : rejected.rows) t.add_row(row);
    out += t.render(width);
  }
  return out;
}

std::string plan_report_markdown(const PlanResult& r) {
  std::string out = fmt::format("## bubblesim plan: {}\n\n", markdown_text(r.job.name));
  for (const std::string& line : plan_summary(r)) out += markdown_text(line) + "\n\n";
  if (!r.ranked.empty()) {
    out += md_table(plan_ranked_rows(r), 4) + "\n";
    for (const std::string& line : plan_reasons(r)) out += "- " + markdown_text(line) + "\n";
    out += "\n";
  }
  for (std::size_t i : r.failed) {
    const PlanCandidate& c = r.candidates[i];
    out += fmt::format("- **{}**: {}: {}\n", markdown_text(c.label),
                       markdown_text(c.replay->status), markdown_text(c.replay->failure));
  }
  const ReportRows rejected = plan_rejected_rows(r);
  if (!rejected.rows.empty())
    out += "\n### Layouts with no candidate left\n\n" + md_table(rejected, 4);
  return out;
}

std::string plan_report_csv(const PlanResult& r) {
  std::string out = "candidate,family,label";
  for (const PlanAxis& a : plan_axes()) out += "," + std::string(a.name);
  out +=
      ",dp,status,reason,estimate_iteration_s,estimate_peak_memory_bytes,rank,iteration_s,"
      "tokens_per_s_per_gpu,mfu,peak_memory_bytes,compute_s,bubble_s,imbalance_s,p2p_s,"
      "collectives_s,a2a_s\n";
  std::map<std::size_t, std::size_t> rank;
  for (std::size_t k = 0; k < r.ranked.size(); ++k) rank[r.ranked[k]] = k + 1;
  auto number = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.17g}", *v) : std::string();
  };
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const PlanCandidate& c = r.candidates[i];
    std::string row = fmt::format("{},{},{}", i, csv_quote(c.family), csv_quote(c.label));
    for (const std::string& v : c.values) row.append(",").append(csv_quote(v));
    const std::string status = c.replay     ? c.replay->status
                               : c.estimate ? std::string("estimated")
                                            : std::string(plan_rejection_name(c.rejection));
    const std::string reason = c.replay ? c.replay->failure : c.reason;
    row += fmt::format(",{},{},{}", c.degrees.dp, csv_quote(status), csv_quote(reason));
    row += "," + number(c.estimate ? std::optional<double>(c.estimate->iteration_s) : std::nullopt);
    row += "," +
           number(c.estimate ? std::optional<double>(c.estimate->peak_memory_bytes) : std::nullopt);
    row += "," + (rank.count(i) ? std::to_string(rank[i]) : std::string());
    if (c.replay && c.replay->status == "ok") {
      const PlanReplay& p = *c.replay;
      row += fmt::format(",{:.17g},{},{},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g},{:.17g}",
                         p.iteration_s, number(p.tokens_per_s_per_gpu), number(p.mfu),
                         p.peak_memory_bytes, p.compute_s, p.bubble_s, p.imbalance_s, p.p2p_s,
                         p.collectives_s, p.a2a_s);
    } else {
      row += ",,,,,,,,,,";
    }
    out += row + "\n";
  }
  return out;
}

}  // namespace bubblesim
