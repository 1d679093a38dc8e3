#pragma once
// The reports of `bubblesim plan` (docs/plan.md), every format from one PlanResult: text for the
// terminal (fitted to a width), Markdown (a CI summary), CSV (one row per candidate that was
// estimated), JSON (everything, the candidates' scenarios included) and a self-contained HTML
// page with the comparison chart. Deterministic: the phases' wall times are only in the JSON's
// `run` object.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/plan/plan_result.h"
#include "sim/report/report_rows.h"

namespace bubblesim {

/// The ranked layouts: rank, layout, schedule, tokens/s/GPU, MFU, iteration time, peak memory
/// and its share of the budget, the estimate's error, and the iteration split in % (compute,
/// bubble, exposed communication, imbalance).
ReportRows plan_ranked_rows(const PlanResult& result);

/// Per ranked layout but the last, why it beats the next: the iteration time it saves and the
/// parts that save it ("#1 beats #2 by 0.421 s (2.9%): bubble -0.300 s, exposed comm -0.102 s").
std::vector<std::string> plan_reasons(const PlanResult& result);

/// What was searched and what became of it, one sentence each.
std::vector<std::string> plan_summary(const PlanResult& result);

/// The families (parallel layouts) with no candidate left, and why.
ReportRows plan_rejected_rows(const PlanResult& result);

std::string plan_report_text(const PlanResult& result, std::size_t width);
std::string plan_report_markdown(const PlanResult& result);
std::string plan_report_csv(const PlanResult& result);
nlohmann::json plan_report_json(const PlanResult& result);
std::string plan_report_html(const PlanResult& result);

}  // namespace bubblesim
