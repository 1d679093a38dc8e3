#include "sim/report/resolved_scenario_json.h"

#include <variant>

#include "sim/costmodel/model_reader.h"

namespace bubblesim {
namespace {

/// What the data-parallel engine runs (data_parallel_engine.h), as docs/outputs.md describes.
nlohmann::json data_parallel_json(const ParallelismSpec& par) {
  const DataParallelSemantics& s = par.data_parallel.semantics;
  const char* readiness = s.end.readiness == BucketReadiness::DuringBackward  ? "during_backward"
                          : s.end.readiness == BucketReadiness::AfterBackward ? "after_backward"
                                                                              : "after_compute";
  const char* gather = s.gather == ParameterGather::AfterStep       ? "after_step"
                       : s.gather == ParameterGather::BehindForward ? "behind_forward"
                       : s.gather == ParameterGather::BehindFill    ? "behind_fill"
                                                                    : "none";
  return {{"engine", std::string(data_parallel_engine_name(s.engine))},
          {"engine_from", par.data_parallel.engine_from},
          {"zero", s.zero},
          {"shard_group", par.shard_group()},
          {"replicate", par.data_parallel.replicate},
          {"per_microbatch",
           {{"all_gather_forward", s.per_microbatch.gather_forward},
            {"all_gather_backward", s.per_microbatch.gather_backward},
            {"reduce_scatter", s.per_microbatch.reduce_scatter},
            {"prefetch", s.prefetch}}},
          {"end_of_step",
           s.end.runs ? nlohmann::json{{"collective",
                                        s.end.reduce_scatter ? "reduce-scatter" : "all-reduce"},
                                       {"buckets_ready", readiness}}
                      : nlohmann::json(nullptr)},
          {"parameter_gather", gather},
          {"reduce_bytes_per_parameter", s.reduce_bytes},
          {"gather_bytes_per_parameter", s.gather_bytes},
          {"fp8_param_gather", s.fp8_param_gather},
          {"description", describe(s)}};
}

}  // namespace

namespace {

nlohmann::json param_json(const ParamValue& v) {
  struct Visitor {
    nlohmann::json operator()(std::int64_t x) const { return x; }
    nlohmann::json operator()(double x) const { return x; }
    nlohmann::json operator()(bool x) const { return x; }
    nlohmann::json operator()(const std::string& x) const { return x; }
    nlohmann::json operator()(Time x) const { return x.seconds(); }
    nlohmann::json operator()(Bytes x) const { return x.count(); }
  };
  return std::visit(Visitor{}, v);
}

nlohmann::json variability_json(const VariabilitySpec& v) {
  auto kinds = [](const CvByKind& cv) {
    nlohmann::json j = nlohmann::json::object();
    for (int k = 0; k < kJitterKinds; ++k)
      j[std::string(jitter_kind_key(static_cast<JitterKind>(k)))] = cv[static_cast<std::size_t>(k)];
    return j;
  };
  nlohmann::json stages = nlohmann::json::array();
  for (const CvByKind& s : v.stage_cv) stages.push_back(kinds(s));
  nlohmann::json out = {
      {"cv", kinds(v.cv)},
      {"cv_source", v.stage_cv.empty() ? "scenario" : "profile"},
      {"stage_cv", stages},
      {"distribution", jitter_distribution_name(v.distribution)},
      {"per", jitter_unit_name(v.per)},
      {"correlation", {{"within_device", v.within_device}, {"across_devices", v.across_devices}}},
      {"samples", v.samples},
      {"seed", v.seed}};
  // `slowest_of: group` (absent otherwise, so earlier reports keep their bytes).
  if (v.gpus_per_device > 1) out["gpus_per_device"] = v.gpus_per_device;
  return out;
}

}  // namespace

nlohmann::json resolved_scenario_json(const ResolvedScenario& resolved) {
  const Scenario& sc = *resolved.scenario;
  nlohmann::json j;
  j["name"] = sc.labels.name;
  if (!sc.labels.description.empty()) j["description"] = sc.labels.description;
  j["pipeline"] = {{"stages", sc.stages}, {"microbatches", sc.microbatches}};

  nlohmann::json costs;
  auto times = [&](const char* key, Time StageCost::*field) {
    nlohmann::json a = nlohmann::json::array();
    for (const StageCost& s : resolved.costs.stages) a.push_back((s.*field).seconds());
    costs[key] = a;
  };
  auto sizes = [&](const char* key, Bytes StageCost::*field) {
    nlohmann::json a = nlohmann::json::array();
    for (const StageCost& s : resolved.costs.stages) a.push_back((s.*field).count());
    costs[key] = a;
  };
  costs["source"] = sc.costs.source;
  times("forward_s", &StageCost::forward);
  times("backward_input_s", &StageCost::backward_input);
  times("backward_weight_s", &StageCost::backward_weight);
  times("recompute_s", &StageCost::recompute);
  times("fused_forward_backward_s", &StageCost::fused);
  sizes("activation_memory_bytes", &StageCost::activation);
  sizes("weight_grad_memory_bytes", &StageCost::weight_grad);
  sizes("stage_input_memory_bytes", &StageCost::stage_input);
  sizes("p2p_bytes", &StageCost::p2p);
  sizes("static_memory_bytes", &StageCost::static_memory);
  // The routed experts' part of the static memory and of M_B (docs/moe.md), with MoE only.
  if (has_expert_memory(resolved.costs.stages)) {
    for (const auto& [key, field] :
         {std::pair{"expert_static_memory_bytes", &StageCost::Moe::expert_static},
          std::pair{"expert_activation_memory_bytes", &StageCost::Moe::expert_activation}}) {
      nlohmann::json a = nlohmann::json::array();
      for (const StageCost& s : resolved.costs.stages) a.push_back((s.moe.*field).count());
      costs[key] = a;
    }
  }
  // Beside a model, the key the op times came from (TFLOP/s and MFU count the model's FLOPs over
  // them, docs/recipes.md); absent when the model derives them.
  if (sc.model && !sc.costs.times_key.empty()) costs["times_given_by"] = sc.costs.times_key;
  // Mechanisms a preset or default would have turned on that this cost form leaves off, with why
  // (absent when none: reports without them stay as they were).
  if (!sc.costs.not_applied.empty()) {
    nlohmann::json off = nlohmann::json::array();
    for (const CostsSpec::NotApplied& n : sc.costs.not_applied)
      off.push_back({{"key", n.key}, {"reason", n.reason}});
    costs["not_applied"] = off;
  }
  j["costs"] = costs;

  if (sc.model) j["model"] = transformer_model_json(*sc.model);
  if (sc.gpu) j["cluster"] = {{"gpu", gpu_spec_json(*sc.gpu)}};

  const CommunicationSpec& c = sc.communication;
  if (c.kind == CommunicationKind::FixedDelay) {
    j["communication"] = {{"model", "fixed-delay"}, {"delay_s", c.delay.seconds()}};
  } else {
    nlohmann::json t = {{"model", "topology"}};
    if (c.topology) {
      t["vertices"] = c.topology->vertex_count();
      t["links"] = c.topology->link_count();
      nlohmann::json placement = nlohmann::json::array();
      for (VertexId v : c.placement) placement.push_back(c.topology->vertex_name(v));
      t["placement"] = placement;
    }
    j["communication"] = t;
  }
  j["communication"]["p2p"] = std::string(p2p_mode_name(c.p2p));
  if (c.p2p_sync_gap > Time::zero())
    j["communication"]["p2p_sync_gap_s"] = c.p2p_sync_gap.seconds();
  if (c.kind == CommunicationKind::Topology && sc.parallelism.ep > 1)  // docs/moe.md
    j["communication"]["all_to_all"] = c.all_to_all == AllToAllNetwork::Shared ? "shared" : "idle";
  j["iteration"] = {{"count", sc.iteration.count},
                    {"barrier", std::string(iteration_barrier_name(sc.iteration.barrier))}};
  if (!resolved.optimizer_step.empty()) {
    nlohmann::json steps = nlohmann::json::array();
    for (Time t : resolved.optimizer_step) steps.push_back(t.seconds());
    j["iteration"]["optimizer_step_s"] = steps;
  }

  nlohmann::json budget = nlohmann::json::array();
  for (Bytes b : resolved.memory_budget) budget.push_back(b.count());
  const MemorySpec& mem = sc.memory;
  nlohmann::json offload = {
      {"policy", memory_policy_name(mem.offload.policy)},
      {"prefetch", mem.offload.prefetch},
      {"stages", mem.offload.stages},
      {"min_idle_s", mem.offload.min_idle.seconds()},
      {"bandwidth_bytes_per_s", mem.offload_bandwidth
                                    ? nlohmann::json(mem.offload_bandwidth->bytes_per_second())
                                    : nlohmann::json(nullptr)}};
  nlohmann::json recompute = {{"policy", memory_policy_name(mem.recompute.policy)},
                              {"stages", mem.recompute.stages}};
  if (mem.recompute.fraction) recompute["fraction"] = *mem.recompute.fraction;
  if (mem.recompute.layers) recompute["layers"] = *mem.recompute.layers;
  if (sc.parallelism.enabled) {
    const ParallelismSpec& par = sc.parallelism;
    j["parallelism"] = {
        {"dp", par.dp},
        {"tp", par.tp},
        {"order", par.order},
        {"bucket_bytes", par.data_parallel.bucket
                             .value_or(Bytes(default_bucket_bytes(par.data_parallel.semantics,
                                                                  par.gradient_group())))
                             .count()},
        {"overlap", par.data_parallel.overlap},
        {"algorithm", std::string(collective_algorithm_name(par.data_parallel.algorithm))},
        {"replica_sync", par.data_parallel.replica_sync},
        {"sp", par.sp},
        {"zero", par.zero.level}};
    if (par.cp > 1) j["parallelism"]["cp"] = par.cp;  // left out at 1, as before it existed
    j["parallelism"]["data_parallel"] = data_parallel_json(par);
    if (par.zero.level >= 2) j["parallelism"]["zero_overlap"] = par.zero.overlap;
    if (par.data_parallel.ring_steps == RingSteps::Stepped)
      j["parallelism"]["ring_steps"] = "stepped";  // the default, pipelined, is left out
    if (par.sp) {
      j["parallelism"]["sp_wgrad_input"] =
          par.sp_wgrad_input == SpWgradInput::Keep ? "keep" : "regather";
    }
  }
  j["memory"] = {
      {"budget_bytes", resolved.memory_budget.empty() ? nlohmann::json(nullptr) : budget},
      {"host_capacity_bytes",
       mem.host_capacity ? nlohmann::json(mem.host_capacity->count()) : nlohmann::json(nullptr)},
      {"release", mem.release == ReleaseConvention::Split ? "split" : "backward-complete"},
      {"offload", offload},
      {"recompute", recompute}};

  nlohmann::json schedules = nlohmann::json::array();
  for (const ScheduleRequest& r : sc.schedules) {
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [key, value] : r.params.all()) params[key] = param_json(value);
    schedules.push_back({{"name", r.name}, {"params", params}});
  }
  j["schedules"] = schedules;
  if (sc.faults.any()) {
    nlohmann::json links = nlohmann::json::array();
    for (const LinkFaultSpec& l : sc.faults.links) {
      links.push_back(
          {{"between", {l.a, l.b}},
           {"at_s", l.at.seconds()},
           {"bandwidth_bytes_per_s",
            l.bandwidth ? nlohmann::json(l.bandwidth->bytes_per_second()) : nlohmann::json(0.0)},
           {"cut", !l.bandwidth.has_value()}});
    }
    j["faults"] = {{"slowdown", sc.faults.slowdown}, {"links", links}};
  }
  if (sc.variability) j["variability"] = variability_json(*sc.variability);
  return j;
}

}  // namespace bubblesim
