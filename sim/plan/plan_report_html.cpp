// The plan's HTML page: self-contained (the report's styles inline, static SVG, no script, no
// URL), the comparison chart of the ranked layouts first, then the tables of the text report.
#include <fmt/format.h>

#include "sim/plan/plan_report.h"
#include "sim/report/html_assets.h"
#include "sim/report/html_comparison.h"
#include "sim/report/html_escape.h"
#include "sim/report/html_table.h"

namespace bubblesim {
std::string plan_report_html(const PlanResult& r) {
  const std::string title = escape_html("bubblesim plan: " + r.job.name);
  std::string h = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                  title + "</title>\n<style>" + std::string(html_asset_report_css()) +
                  "</style>\n</head>\n<body class=\"plan\">\n<h1>" + title + "</h1>\n";
  for (const std::string& line : plan_summary(r)) h += "<p>" + escape_html(line) + "</p>\n";
  std::vector<ComparisonRow> rows;
  for (std::size_t k = 0; k < r.ranked.size(); ++k) {
    const PlanCandidate& c = r.candidates[r.ranked[k]];
    const PlanReplay& p = *c.replay;
    ComparisonRow row;
    static_cast<IterationParts&>(row) = p;
    row.label = fmt::format("#{} {}", k + 1, c.label);
    row.total_s = p.iteration_s;
    row.peak_memory_bytes = p.peak_memory_bytes;
    row.budget_bytes = p.memory_budget_bytes;
    if (p.tokens_per_s_per_gpu)
      row.note = fmt::format("{:.0f} tokens/s/GPU", *p.tokens_per_s_per_gpu);
    rows.push_back(std::move(row));
  }
  if (!rows.empty()) {
    h += "<h2>ranked layouts</h2>\n" +
         comparison_chart_html(rows,
                               "each replayed layout's iteration, fastest first: where the "
                               "time goes, and its peak memory against the budget");
    h += html_table(plan_ranked_rows(r), "plan-ranked");
    h += "<ul class=\"reasons\">\n";
    for (const std::string& line : plan_reasons(r)) h += "<li>" + escape_html(line) + "</li>\n";
    h += "</ul>\n";
  } else {
    h += "<p class=\"fail\">No layout ran without failing.</p>\n";
  }
  for (std::size_t i : r.failed) {
    const PlanCandidate& c = r.candidates[i];
    h += fmt::format("<p class=\"fail\">{}: {}: {}</p>\n", escape_html(c.label),
                     escape_html(c.replay->status), escape_html(c.replay->failure));
  }
  if (!r.estimated_only.empty()) {
    ReportRows est{{"layout", "estimated iteration s", "estimated peak GiB"}, {}};
    for (std::size_t i : r.estimated_only) {
      const PlanCandidate& c = r.candidates[i];
      est.rows.push_back({c.label, fmt::format("{:.4f}", c.estimate->iteration_s),
                          fmt::format("{:.2f}", c.estimate->peak_memory_bytes / (1 << 30))});
    }
    h += "<h2>best estimates not replayed</h2>\n" + html_table(est, "plan-estimated");
  }
  const ReportRows rejected = plan_rejected_rows(r);
  if (!rejected.rows.empty())
    h += "<h2>layouts with no candidate left</h2>\n" + html_table(rejected, "plan-rejected");
  return h + "</body>\n</html>\n";
}

}  // namespace bubblesim
