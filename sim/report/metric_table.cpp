#include "sim/report/metric_table.h"

#include <fmt/format.h>

#include <algorithm>

#include "schedules/a2a_exposure.h"
#include "sim/report/component_rows.h"
#include "sim/report/idle_split_report.h"
#include "sim/report/throughput.h"

namespace bubblesim {
namespace {

using Level = MetricLevel;
using Unit = MetricUnit;
using Shape = MetricShape;
constexpr MetricDirection kLower = MetricDirection::LowerIsBetter;
constexpr MetricDirection kInfo = MetricDirection::Informational;
constexpr MetricDirection kHigher = MetricDirection::HigherIsBetter;

MetricValue number(double v) { return {v, {}}; }
MetricValue number(Time t) { return {t.seconds(), {}}; }
MetricValue number(Bytes b) { return {b.as_double(), {}}; }
MetricValue optional(const std::optional<double>& v) { return {v, {}}; }
MetricValue per_device(const std::vector<Time>& ts) {
  MetricValue out;
  for (Time t : ts) out.per_device.push_back(t.seconds());
  return out;
}
MetricValue per_device(const std::vector<Bytes>& bs) {
  MetricValue out;
  for (Bytes b : bs) out.per_device.push_back(b.as_double());
  return out;
}
MetricValue per_device(const std::vector<double>& vs) { return {std::nullopt, vs}; }
/// Copy-engine busy time over the makespan, per device.
MetricValue utilization(const std::vector<Time>& busy, Time makespan) {
  MetricValue out;
  for (Time t : busy)
    out.per_device.push_back(makespan > Time::zero() ? t.seconds() / makespan.seconds() : 0.0);
  return out;
}

/// A statistic of a Monte Carlo metric (none without variability).
enum class Stat { Sd, P50, P95 };
MetricValue sampled(const MetricInput& in, SampleSummary MonteCarloResult::*summary, Stat stat) {
  if (!in.mc()) return {};
  const SampleSummary& s = (*in.mc()).*summary;
  switch (stat) {
    case Stat::Sd:
      return number(s.sd);
    case Stat::P50:
      return number(s.p50);
    case Stat::P95:
      return number(s.p95);
  }
  return {};
}

/// One part of the idle-time split (sim/engine/idle_split.h): summed over devices, or per
/// device; none when the run has no split.
MetricValue idle_total(const std::vector<Time>& part) {
  if (part.empty()) return {};
  return number(IdleSplit::total_seconds(part));
}
MetricValue idle_per_device(const std::vector<Time>& part) {
  if (part.empty()) return {};
  return per_device(part);
}

MetricValue largest(const std::vector<Bytes>& bs) {
  Bytes most;
  for (Bytes b : bs) most = std::max(most, b);
  return number(most);
}

/// The iteration time in seconds: with variability the mean over the samples.
double iteration_time_s(const MetricInput& in) {
  return in.mc() ? in.mc()->iteration_time_s.mean : in.sim().iteration.iteration_time.seconds();
}

/// Samples per second: the global batch (m microbatches of micro_batch_size samples, times the
/// data-parallel degree; one sample per microbatch without a model) over the iteration time
/// (with variability its mean over the samples).
MetricValue samples_per_second(const MetricInput& in) {
  const double t = iteration_time_s(in);
  if (t <= 0.0) return {};
  const double micro =
      in.scenario.model ? static_cast<double>(in.scenario.model->micro_batch_size) : 1.0;
  const double batch = static_cast<double>(in.scenario.microbatches) * micro *
                       static_cast<double>(in.scenario.parallelism.dp);
  return number(batch / t);
}

/// The recipe's units (sim/report/throughput.h, docs/recipes.md): none without a model, a
/// GPU peak (MFU) or a completed iteration.
MetricValue recipe_metric(const MetricInput& in, std::optional<double> Throughput::*member) {
  if (!in.mc() && in.sim().iteration.iterations == 0) return {};
  return optional(throughput(in.scenario, iteration_time_s(in)).*member);
}

/// The largest all-to-all time (or its exposed part, or the compute it slowed) of a device; none
/// without one. As the replay ran it when it ran the all-to-all as flows, else from the costs.
MetricValue a2a_metric(const MetricInput& in, Time A2aTime::*part) {
  std::vector<A2aTime> devices;
  const A2aMetrics& replayed = in.sim().a2a;
  if (!replayed.total_per_device.empty()) {
    for (std::size_t d = 0; d < replayed.total_per_device.size(); ++d)
      devices.push_back(A2aTime{replayed.total_per_device[d], replayed.exposed_per_device[d],
                                replayed.slowdown_per_device[d]});
  } else {
    // Once per run for the three a2a metrics (a2a_exposure.h builds a table index for it).
    if (!in.run.a2a_from_costs) {
      in.run.a2a_from_costs = std::make_shared<const std::vector<A2aTime>>(
          a2a_per_device(in.run.table, in.run.stage_costs));
    }
    devices = *in.run.a2a_from_costs;
  }
  Time total, most;
  for (const A2aTime& a : devices) {
    total += a.total;
    most = std::max(most, a.*part);
  }
  if (total == Time::zero()) return {};
  return number(most);
}

const std::vector<Metric> kCentralMetrics = {
    // The first twelve are the CSV columns of the first report version, in their order.
    {"bubble_ratio", Level::Formula, Unit::Ratio, kLower, Shape::Scalar, "bubble",
     "closed-form bubble ratio (uniform stages, no communication)",
     [](const MetricInput& in) { return optional(in.run.formula.bubble_ratio); }},
    {"peak_activation_units", Level::Formula, Unit::ActivationUnits, kLower, Shape::Scalar,
     "peak act", "closed-form peak activations, in one stage's microbatch activations",
     [](const MetricInput& in) { return optional(in.run.formula.peak_activation_units); }},
    {"makespan_s", Level::Table, Unit::Seconds, kLower, Shape::Scalar, "makespan",
     "idealized replay (scenario costs, no communication): first start to last end",
     [](const MetricInput& in) { return number(in.ideal().makespan); }},
    {"bubble_ratio", Level::Table, Unit::Ratio, kLower, Shape::Scalar, "bubble",
     "idealized idle time over devices x makespan",
     [](const MetricInput& in) { return number(in.ideal().bubble_ratio); }},
    {"makespan_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "makespan",
     "simulated replay with communication and memory: first start to last end (sync included); "
     "with variability the mean over the samples",
     [](const MetricInput& in) {
       return in.mc() ? number(in.mc()->makespan_s.mean) : number(in.sim().makespan);
     }},
    {"stage_span_max_s", Level::Simulation, Unit::Seconds, kInfo, Shape::Scalar, "span",
     "longest first-to-last compute span of a device (a part of the makespan, which is judged)",
     [](const MetricInput& in) { return number(in.sim().stage_span_max); }},
    {"bubble_ratio", Level::Simulation, Unit::Ratio, kLower, Shape::Scalar, "bubble",
     "simulated idle time over devices x makespan; with variability the mean over the samples",
     [](const MetricInput& in) {
       return in.mc() ? number(in.mc()->bubble_ratio.mean) : number(in.sim().bubble_ratio);
     }},
    {"bubble_ratio_span", Level::Simulation, Unit::Ratio, kLower, Shape::Scalar, "bubble(span)",
     "simulated idle time within each device's span (the ZB paper's bubble rate)",
     [](const MetricInput& in) { return number(in.sim().bubble_ratio_span); }},
    {"peak_activation_bytes", Level::Simulation, Unit::Bytes, kLower, Shape::Scalar, "",
     "largest activation memory of a device",
     [](const MetricInput& in) { return number(in.sim().memory.peak_activation); }},
    {"peak_activation_units", Level::Simulation, Unit::ActivationUnits, kLower, Shape::Scalar,
     "peak act", "largest activation memory of a device, in one stage's microbatch activations",
     [](const MetricInput& in) { return number(in.sim().memory.peak_activation_units); }},
    {"exposed_comm_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "exposed comm",
     "largest compute idle time of a device caused by data in flight",
     [](const MetricInput& in) { return number(in.sim().comm.exposed_comm); }},
    {"recompute_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "time spent recomputing activations (R ops and inside backwards), summed over devices",
     [](const MetricInput& in) { return number(in.sim().recompute_time); }},
    // Appended after the first version.
    {"stage_span_max_s", Level::Table, Unit::Seconds, kInfo, Shape::Scalar, "span",
     "idealized longest compute span of a device (a part of the makespan, which is judged)",
     [](const MetricInput& in) { return number(in.ideal().stage_span_max); }},
    {"bubble_ratio_span", Level::Table, Unit::Ratio, kLower, Shape::Scalar, "bubble(span)",
     "idealized idle time within each device's span",
     [](const MetricInput& in) { return number(in.ideal().bubble_ratio_span); }},
    {"peak_activation_units", Level::Table, Unit::ActivationUnits, kLower, Shape::Scalar,
     "peak act", "idealized peak activations, in one stage's microbatch activations",
     [](const MetricInput& in) { return number(in.ideal().memory.peak_activation_units); }},
    {"peak_memory_bytes", Level::Simulation, Unit::Bytes, kLower, Shape::Scalar, "peak mem",
     "largest memory of a device: static memory plus activations",
     [](const MetricInput& in) { return largest(in.sim().memory.peak_memory_per_device); }},
    {"offloaded_bytes", Level::Simulation, Unit::Bytes, kLower, Shape::Scalar, "",
     "activation bytes copied to host memory, summed over devices",
     [](const MetricInput& in) { return number(in.sim().offload.offloaded_bytes); }},
    {"exposed_offload_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "time compute waited for reloads beyond its other inputs, summed over devices",
     [](const MetricInput& in) { return number(in.sim().offload.exposed_offload); }},
    {"dp_sync_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "largest data-parallel gradient all-reduce time of a stage",
     [](const MetricInput& in) { return number(in.sim().sync.dp_sync); }},
    {"exposed_dp_sync_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "gradient sync after the last compute op ends",
     [](const MetricInput& in) { return number(in.sim().sync.exposed_dp_sync); }},
    {"replica_sync_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "largest replica all-reduce time of a stage (bidirectional schedules)",
     [](const MetricInput& in) { return number(in.sim().sync.replica_sync); }},
    {"optimizer_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "largest optimizer step of a device",
     [](const MetricInput& in) { return number(in.sim().sync.optimizer); }},
    {"tp_comm_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "largest tensor-parallel all-reduce time inside a device's ops",
     [](const MetricInput& in) { return number(in.sim().sync.tp_comm); }},
    // Per device; `regress` judges them through the scalar metric that summarises them.
    {"peak_activation_bytes_per_device", Level::Simulation, Unit::Bytes, kLower, Shape::PerDevice,
     "", "activation memory peak of each device",
     [](const MetricInput& in) { return per_device(in.sim().memory.peak_activation_per_device); }},
    {"peak_activation_time_s_per_device", Level::Simulation, Unit::Seconds, kInfo, Shape::PerDevice,
     "", "when each device's activation peak was first reached",
     [](const MetricInput& in) {
       return per_device(in.sim().memory.peak_activation_time_per_device);
     }},
    {"peak_activation_units_per_device", Level::Simulation, Unit::ActivationUnits, kLower,
     Shape::PerDevice, "", "activation peak of each device in microbatch activations",
     [](const MetricInput& in) {
       return per_device(in.sim().memory.peak_activation_units_per_device);
     }},
    {"peak_memory_bytes_per_device", Level::Simulation, Unit::Bytes, kLower, Shape::PerDevice, "",
     "memory peak (static plus activations) of each device",
     [](const MetricInput& in) { return per_device(in.sim().memory.peak_memory_per_device); }},
    {"peak_memory_time_s_per_device", Level::Simulation, Unit::Seconds, kInfo, Shape::PerDevice, "",
     "when each device's memory peak was first reached",
     [](const MetricInput& in) { return per_device(in.sim().memory.peak_memory_time_per_device); }},
    {"exposed_comm_s_per_device", Level::Simulation, Unit::Seconds, kLower, Shape::PerDevice, "",
     "compute idle time caused by data in flight, per device",
     [](const MetricInput& in) { return per_device(in.sim().comm.exposed_comm_per_device); }},
    {"offloaded_bytes_per_device", Level::Simulation, Unit::Bytes, kLower, Shape::PerDevice, "",
     "activation bytes copied to host, per device",
     [](const MetricInput& in) { return per_device(in.sim().offload.offloaded_bytes_per_device); }},
    {"exposed_offload_s_per_device", Level::Simulation, Unit::Seconds, kLower, Shape::PerDevice, "",
     "time compute waited for reloads, per device",
     [](const MetricInput& in) { return per_device(in.sim().offload.exposed_offload_per_device); }},
    {"d2h_busy_s_per_device", Level::Simulation, Unit::Seconds, kInfo, Shape::PerDevice, "",
     "device-to-host copy engine busy time",
     [](const MetricInput& in) { return per_device(in.sim().offload.d2h_busy_per_device); }},
    {"h2d_busy_s_per_device", Level::Simulation, Unit::Seconds, kInfo, Shape::PerDevice, "",
     "host-to-device copy engine busy time",
     [](const MetricInput& in) { return per_device(in.sim().offload.h2d_busy_per_device); }},
    {"d2h_utilization_per_device", Level::Simulation, Unit::Ratio, kInfo, Shape::PerDevice, "",
     "device-to-host copy engine busy time over the makespan",
     [](const MetricInput& in) {
       return utilization(in.sim().offload.d2h_busy_per_device, in.sim().makespan);
     }},
    {"h2d_utilization_per_device", Level::Simulation, Unit::Ratio, kInfo, Shape::PerDevice, "",
     "host-to-device copy engine busy time over the makespan",
     [](const MetricInput& in) {
       return utilization(in.sim().offload.h2d_busy_per_device, in.sim().makespan);
     }},
    {"busy_s_per_device", Level::Simulation, Unit::Seconds, kInfo, Shape::PerDevice, "",
     "compute stream busy time (recompute included) of each device",
     [](const MetricInput& in) { return per_device(in.sim().busy_per_device); }},
    {"span_s_per_device", Level::Simulation, Unit::Seconds, kInfo, Shape::PerDevice, "",
     "first start to last end of each device's compute ops",
     [](const MetricInput& in) { return per_device(in.sim().span_per_device); }},
    // Whole iterations and blocking p2p (docs/iterations.md).
    {"iteration_time_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "iteration",
     "steady-state iteration: the period of the last replayed iteration, optimizer step, syncs "
     "and barrier included; with variability the mean over the samples; none when no iteration "
     "completed (out of memory or deadlock)",
     [](const MetricInput& in) {
       if (!in.mc() && in.sim().iteration.iterations == 0) return MetricValue{};
       return number(iteration_time_s(in));
     }},
    {"samples_per_s", Level::Simulation, Unit::SamplesPerSecond, kHigher, Shape::Scalar, "",
     "global batch (microbatches x micro_batch_size x dp) over the iteration time",
     [](const MetricInput& in) { return samples_per_second(in); }},
    {"dp_sm_slowdown_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "largest time a device's compute ran longer because its gradient buckets' NCCL kernels "
     "held overlap.comm_sm_fraction of its SMs; absent without data-parallel buckets",
     [](const MetricInput& in) {
       if (!(in.scenario.parallelism.overlap.comm_sm_fraction > 0) || !in.sim().sync.enabled)
         return MetricValue{};
       return number(in.sim().sync.sm_slowdown);
     }},
    {"parameter_gather_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "ZeRO 1-2: largest all-gather of the updated parameters after a device's optimizer step",
     [](const MetricInput& in) { return number(in.sim().sync.parameter_gather); }},
    // Variability (docs/variability.md): the Monte Carlo samples' spread; none without it.
    {"samples", Level::Simulation, Unit::Count, kInfo, Shape::Scalar, "",
     "Monte Carlo samples of the simulation (variability.samples)",
     [](const MetricInput& in) {
       return in.mc() ? number(static_cast<double>(in.mc()->samples.size())) : MetricValue{};
     }},
    {"makespan_sd_s", Level::Simulation, Unit::Seconds, kInfo, Shape::Scalar, "",
     "standard deviation of the makespan over the samples",
     [](const MetricInput& in) { return sampled(in, &MonteCarloResult::makespan_s, Stat::Sd); }},
    {"makespan_p50_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "median makespan over the samples",
     [](const MetricInput& in) { return sampled(in, &MonteCarloResult::makespan_s, Stat::P50); }},
    {"makespan_p95_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "95th percentile of the makespan over the samples",
     [](const MetricInput& in) { return sampled(in, &MonteCarloResult::makespan_s, Stat::P95); }},
    {"bubble_ratio_sd", Level::Simulation, Unit::Ratio, kInfo, Shape::Scalar, "",
     "standard deviation of the bubble ratio over the samples",
     [](const MetricInput& in) { return sampled(in, &MonteCarloResult::bubble_ratio, Stat::Sd); }},
    {"bubble_ratio_p50", Level::Simulation, Unit::Ratio, kLower, Shape::Scalar, "",
     "median bubble ratio over the samples",
     [](const MetricInput& in) { return sampled(in, &MonteCarloResult::bubble_ratio, Stat::P50); }},
    {"bubble_ratio_p95", Level::Simulation, Unit::Ratio, kLower, Shape::Scalar, "",
     "95th percentile of the bubble ratio over the samples",
     [](const MetricInput& in) { return sampled(in, &MonteCarloResult::bubble_ratio, Stat::P95); }},
    {"noiseless_makespan_s", Level::Simulation, Unit::Seconds, kInfo, Shape::Scalar, "",
     "makespan of the replay without variability (the samples' mean over it: the cost of noise)",
     [](const MetricInput& in) {
       return in.run.noiseless ? number(in.run.noiseless->metrics.makespan) : MetricValue{};
     }},
    {"iteration_time_sd_s", Level::Simulation, Unit::Seconds, kInfo, Shape::Scalar, "",
     "standard deviation of the iteration time over the samples",
     [](const MetricInput& in) {
       return sampled(in, &MonteCarloResult::iteration_time_s, Stat::Sd);
     }},
    {"iteration_time_p50_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "median iteration time over the samples",
     [](const MetricInput&
            in) { return sampled(in, &MonteCarloResult::iteration_time_s, Stat::P50); }},
    {"iteration_time_p95_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "95th percentile of the iteration time over the samples",
     [](const MetricInput&
            in) { return sampled(in, &MonteCarloResult::iteration_time_s, Stat::P95); }},
    // Expert parallelism (docs/moe.md): none without an all-to-all.
    {"a2a_s", Level::Simulation, Unit::Seconds, kInfo, Shape::Scalar, "",
     "largest expert all-to-all time (dispatch + combine, F and B) inside a device's ops",
     [](const MetricInput& in) { return a2a_metric(in, &A2aTime::total); }},
    {"a2a_exposed_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "largest part of a device's all-to-all time not hidden under other compute",
     [](const MetricInput& in) { return a2a_metric(in, &A2aTime::exposed); }},
    {"a2a_slowdown_s", Level::Simulation, Unit::Seconds, kLower, Shape::Scalar, "",
     "largest compute time a device loses to SMs its hidden all-to-all holds "
     "(overlap.comm_sm_fraction)",
     [](const MetricInput& in) { return a2a_metric(in, &A2aTime::slowdown); }},
    // A recipe's units (docs/recipes.md): none without a model (seq_len) or, for MFU, a GPU peak.
    {"tokens_per_s_per_gpu", Level::Simulation, Unit::TokensPerSecond, kHigher, Shape::Scalar, "",
     "global batch in tokens (sequences x model.seq_len) over the iteration time, per GPU "
     "(stages x dp x tp)",
     [](const MetricInput& in) { return recipe_metric(in, &Throughput::tokens_per_s_per_gpu); }},
    {"model_tflops_per_gpu", Level::Simulation, Unit::TeraflopsPerSecond, kHigher, Shape::Scalar,
     "",
     "model FLOPs of the global batch (3 passes, recompute not counted) over the iteration "
     "time, per GPU",
     [](const MetricInput& in) { return recipe_metric(in, &Throughput::model_tflops_per_gpu); }},
    {"mfu", Level::Simulation, Unit::Ratio, kHigher, Shape::Scalar, "",
     "model FLOP utilization: model_tflops_per_gpu over the GPU's dense peak in the model's dtype",
     [](const MetricInput& in) { return recipe_metric(in, &Throughput::mfu); }},
    {"gpu_hours_per_trillion_tokens", Level::Simulation, Unit::GpuHours, kLower, Shape::Scalar, "",
     "GPU-hours to train on 10^12 tokens at this iteration time",
     [](const MetricInput&
            in) { return recipe_metric(in, &Throughput::gpu_hours_per_trillion_tokens); }},
    // The idle time split by cause (docs/outputs.md "Idle time by cause"): the parts sum to idle_s.
    {"idle_s", Level::Simulation, Unit::Seconds, kInfo, Shape::Scalar, "",
     "time devices were not computing within the makespan (exposed all-to-all counted as idle), "
     "summed over devices: the sum of the five idle_*_s parts",
     [](const MetricInput& in) { return idle_total(idle_split_of(in.run).idle); }},
    {"idle_bubble_s", Level::Simulation, Unit::Seconds, kInfo, Shape::Scalar, "",
     "idle time of the schedule itself (warm-up, cool-down, dependency waits), summed over devices",
     [](const MetricInput& in) { return idle_total(idle_split_of(in.run).bubble); }},
    {"idle_imbalance_s", Level::Simulation, Unit::Seconds, kInfo, Shape::Scalar, "",
     "idle time waiting for busier devices (largest busy time minus each device's), summed",
     [](const MetricInput& in) { return idle_total(idle_split_of(in.run).imbalance); }},
    {"idle_p2p_s", Level::Simulation, Unit::Seconds, kInfo, Shape::Scalar, "",
     "idle time waiting for point-to-point data in flight (and blocking sends, host gaps), summed",
     [](const MetricInput& in) { return idle_total(idle_split_of(in.run).p2p); }},
    {"idle_collectives_s", Level::Simulation, Unit::Seconds, kInfo, Shape::Scalar, "",
     "idle time from each device's last compute op to the end of its gradient sync, optimizer "
     "step and parameter gather, summed",
     [](const MetricInput& in) { return idle_total(idle_split_of(in.run).collectives); }},
    {"idle_a2a_s", Level::Simulation, Unit::Seconds, kInfo, Shape::Scalar, "",
     "expert all-to-all time left exposed inside the ops, summed over devices",
     [](const MetricInput& in) { return idle_total(idle_split_of(in.run).all_to_all); }},
    {"idle_s_per_device", Level::Simulation, Unit::Seconds, kInfo, Shape::PerDevice, "",
     "idle time of each device (the sum of its five parts)",
     [](const MetricInput& in) { return idle_per_device(idle_split_of(in.run).idle); }},
    {"idle_bubble_s_per_device", Level::Simulation, Unit::Seconds, kInfo, Shape::PerDevice, "",
     "the schedule's own idle time of each device",
     [](const MetricInput& in) { return idle_per_device(idle_split_of(in.run).bubble); }},
    {"idle_imbalance_s_per_device", Level::Simulation, Unit::Seconds, kInfo, Shape::PerDevice, "",
     "idle time of each device waiting for busier devices",
     [](const MetricInput& in) { return idle_per_device(idle_split_of(in.run).imbalance); }},
    {"idle_p2p_s_per_device", Level::Simulation, Unit::Seconds, kInfo, Shape::PerDevice, "",
     "idle time of each device waiting for point-to-point data",
     [](const MetricInput& in) { return idle_per_device(idle_split_of(in.run).p2p); }},
    {"idle_collectives_s_per_device", Level::Simulation, Unit::Seconds, kInfo, Shape::PerDevice, "",
     "idle time of each device in its exposed gradient sync and optimizer step",
     [](const MetricInput& in) { return idle_per_device(idle_split_of(in.run).collectives); }},
    {"idle_a2a_s_per_device", Level::Simulation, Unit::Seconds, kInfo, Shape::PerDevice, "",
     "exposed expert all-to-all time inside each device's ops",
     [](const MetricInput& in) { return idle_per_device(idle_split_of(in.run).all_to_all); }},
};

}  // namespace

std::string Metric::name() const { return fmt::format("{}.{}", metric_level_name(level), key); }

std::string Metric::csv_column() const {
  if (level == MetricLevel::Simulation) return std::string(key);
  return fmt::format("{}_{}", metric_level_name(level), key);
}

const std::vector<Metric>& metric_table() {
  static const std::vector<Metric> table = with_component_rows(kCentralMetrics);
  return table;
}

const Metric* find_metric(std::string_view name) {
  for (const Metric& m : metric_table())
    if (m.name() == name) return &m;
  return nullptr;
}

std::optional<SamplingError> sampling_error_of(const Metric& metric) {
  if (metric.level != MetricLevel::Simulation) return std::nullopt;
  struct Estimate {
    std::string_view key, sd;
    double factor;
  };
  static constexpr Estimate kEstimates[] = {
      {"makespan_s", "makespan_sd_s", 1.0},
      {"makespan_p50_s", "makespan_sd_s", 1.2533141373155},
      {"makespan_p95_s", "makespan_sd_s", 2.1131050434966},
      {"bubble_ratio", "bubble_ratio_sd", 1.0},
      {"bubble_ratio_p50", "bubble_ratio_sd", 1.2533141373155},
      {"bubble_ratio_p95", "bubble_ratio_sd", 2.1131050434966},
      {"iteration_time_s", "iteration_time_sd_s", 1.0},
      {"iteration_time_p50_s", "iteration_time_sd_s", 1.2533141373155},
      {"iteration_time_p95_s", "iteration_time_sd_s", 2.1131050434966},
  };
  for (const Estimate& e : kEstimates) {
    if (e.key != metric.key) continue;
    return SamplingError{find_metric(fmt::format("simulation.{}", e.sd)), e.factor};
  }
  return std::nullopt;
}

const Metric& samples_metric() { return *find_metric("simulation.samples"); }

std::vector<const Metric*> metrics_of_level(MetricLevel level) {
  std::vector<const Metric*> out;
  for (const Metric& m : metric_table())
    if (m.level == level) out.push_back(&m);
  return out;
}

MetricValue metric_value(const Metric& metric, const Scenario& scenario, const ScheduleRun& run) {
  return metric.get(MetricInput{scenario, run});
}

std::string_view metric_level_name(MetricLevel level) {
  switch (level) {
    case MetricLevel::Formula:
      return "formula";
    case MetricLevel::Table:
      return "table";
    case MetricLevel::Simulation:
      return "simulation";
  }
  return "?";
}

std::string_view metric_unit_name(MetricUnit unit) {
  switch (unit) {
    case MetricUnit::Seconds:
      return "s";
    case MetricUnit::Bytes:
      return "bytes";
    case MetricUnit::Ratio:
      return "ratio";
    case MetricUnit::ActivationUnits:
      return "activation units";
    case MetricUnit::Count:
      return "count";
    case MetricUnit::SamplesPerSecond:
      return "samples/s";
    case MetricUnit::TokensPerSecond:
      return "tokens/s";
    case MetricUnit::TeraflopsPerSecond:
      return "TFLOP/s";
    case MetricUnit::GpuHours:
      return "GPU-hours";
  }
  return "?";
}

std::string_view metric_direction_name(MetricDirection direction) {
  switch (direction) {
    case MetricDirection::LowerIsBetter:
      return "lower is better";
    case MetricDirection::HigherIsBetter:
      return "higher is better";
    case MetricDirection::Informational:
      return "informational";
  }
  return "?";
}

}  // namespace bubblesim
