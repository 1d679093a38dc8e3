// The plan's JSON report (docs/plan.md has its schema).
#include <map>

#include "sim/plan/plan_axes.h"
#include "sim/plan/plan_report.h"
#include "sim/report/report_format.h"

namespace bubblesim {
namespace {

using report_format::optional_number;

nlohmann::json layout_json(const PlanCandidate& c) {
  nlohmann::json j;
  for (std::size_t i = 0; i < plan_axes().size() && i < c.values.size(); ++i) {
    const std::string& v = c.values[i];
    if (v.empty()) continue;
    // Numbers and booleans as JSON numbers and booleans; sizes, policies, schedules as text.
    const bool integer = v.find_first_not_of("0123456789") == std::string::npos;
    j[std::string(plan_axes()[i].name)] = integer        ? nlohmann::json(std::stoll(v))
                                          : v == "true"  ? nlohmann::json(true)
                                          : v == "false" ? nlohmann::json(false)
                                                         : nlohmann::json(v);
  }
  j["dp"] = c.degrees.dp;
  return j;
}

nlohmann::json estimate_json(const PlanCandidate& c) {
  if (!c.estimate) return nullptr;
  const PlanEstimate& e = *c.estimate;
  nlohmann::json j = {{"iteration_time_s", e.iteration_s},
                      {"pipeline_s", e.pipeline_s},
                      {"sync_exposed_s", e.sync_exposed_s},
                      {"step_s", e.step_s},
                      {"p2p_s", e.p2p_s},
                      {"peak_memory_bytes", e.peak_memory_bytes}};
  if (c.replay && c.replay->status == "ok" && c.replay->iteration_s > 0)
    j["error"] = (e.iteration_s - c.replay->iteration_s) / c.replay->iteration_s;
  return j;
}

nlohmann::json candidate_json(const PlanCandidate& c) {
  nlohmann::json j = {{"label", c.label},
                      {"family", c.family},
                      {"schedule", c.schedule},
                      {"layout", layout_json(c)},
                      {"estimate", estimate_json(c)}};
  if (c.replay) {
    const PlanReplay& p = *c.replay;
    j["status"] = p.status;
    if (!p.failure.empty()) j["failure"] = p.failure;
    if (p.status == "ok") {
      j["iteration_time_s"] = p.iteration_s;
      j["tokens_per_s_per_gpu"] = optional_number(p.tokens_per_s_per_gpu);
      j["mfu"] = optional_number(p.mfu);
      j["model_tflops_per_gpu"] = optional_number(p.model_tflops_per_gpu);
      j["split"] = {{"compute_s", p.compute_s},         {"bubble_s", p.bubble_s},
                    {"imbalance_s", p.imbalance_s},     {"p2p_s", p.p2p_s},
                    {"collectives_s", p.collectives_s}, {"all_to_all_s", p.a2a_s}};
    }
    j["peak_memory_bytes"] = p.peak_memory_bytes;
    j["memory_budget_bytes"] = p.memory_budget_bytes;
  }
  if (!c.scenario_yaml.empty()) j["scenario"] = c.scenario_yaml;
  return j;
}

}  // namespace

nlohmann::json plan_report_json(const PlanResult& r) {
  nlohmann::json j;
  j["schema"] = "bubblesim-plan/1";
  j["name"] = r.job.name;
  j["file"] = r.job.file;
  j["model"] = r.job.model;
  j["gpu"] = r.job.gpu;
  j["gpus"] = r.job.gpus;
  j["gpus_per_node"] = r.job.gpus_per_node;
  j["global_batch"] = r.job.global_batch;
  j["seq_len"] = r.job.seq_len;
  nlohmann::json search = nlohmann::json::object();
  for (std::size_t i = 0; i < plan_axes().size() && i < r.search.size(); ++i)
    search[std::string(plan_axes()[i].name)] = r.search[i];
  j["search"] = search;
  j["summary"] = plan_summary(r);
  std::map<PlanRejection, std::int64_t> by;
  std::int64_t estimated = 0;
  for (const PlanCandidate& c : r.candidates) c.estimate ? ++estimated : ++by[c.rejection];
  j["counts"] = {{"candidates", r.candidates.size()},
                 {"estimated", estimated},
                 {"loads", r.loads},
                 {"replayed", r.ranked.size() + r.failed.size()},
                 {"failed", r.failed.size()},
                 {"excluded_by_constraints", r.excluded_by_constraints}};
  for (PlanRejection k :
       {PlanRejection::Divisibility, PlanRejection::Memory, PlanRejection::Infeasible,
        PlanRejection::Invalid, PlanRejection::NotEvaluated})
    j["counts"]["rejected"][std::string(plan_rejection_name(k))] = by[k];
  const std::vector<std::string> reasons = plan_reasons(r);
  nlohmann::json ranked = nlohmann::json::array();
  for (std::size_t k = 0; k < r.ranked.size(); ++k) {
    nlohmann::json c = candidate_json(r.candidates[r.ranked[k]]);
    c["rank"] = k + 1;
    c["beats_next"] = k < reasons.size() ? nlohmann::json(reasons[k]) : nlohmann::json(nullptr);
    ranked.push_back(std::move(c));
  }
  j["ranked"] = ranked;
  nlohmann::json failed = nlohmann::json::array();
  for (std::size_t i : r.failed) failed.push_back(candidate_json(r.candidates[i]));
  j["failed"] = failed;
  nlohmann::json estimated_only = nlohmann::json::array();
  for (std::size_t i : r.estimated_only) estimated_only.push_back(candidate_json(r.candidates[i]));
  j["estimated_only"] = estimated_only;
  nlohmann::json rejected = nlohmann::json::array();
  for (const PlanRejectedFamily& f : r.rejected_families) {
    rejected.push_back({{"family", f.family},
                        {"why", plan_rejection_name(f.rejection)},
                        {"candidates", f.candidates},
                        {"reason", f.reason}});
  }
  j["rejected_families"] = rejected;
  j["agreement"] = {{"median_abs_error", r.agreement.median_abs_error},
                    {"max_abs_error", r.agreement.max_abs_error},
                    {"rank_correlation", r.agreement.rank_correlation},
                    {"samples", r.agreement.samples}};
  j["time_budget"] = {{"hit", !r.time_budget_note.empty()}, {"note", r.time_budget_note}};
  // Wall times vary from run to run: only here (tests compare the rest).
  j["run"] = {{"enumerate_s", r.times.enumerate_s},
              {"estimate_s", r.times.estimate_s},
              {"replay_s", r.times.replay_s},
              {"total_s", r.times.total_s}};
  return j;
}

}  // namespace bubblesim
