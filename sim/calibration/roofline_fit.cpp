#include "sim/calibration/roofline_fit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>

#include "sim/costmodel/op_timing.h"
#include "sim/report/text_table.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace {

struct LayerSeconds {
  double forward = 0, backward_input = 0, backward_weight = 0;
};

LayerSeconds layer_seconds(const ComponentWork& work, const GpuSpec& gpu, double e) {
  return {pass_time(work.forward, gpu, e, false).total(),
          pass_time(work.backward_input, gpu, e, true).total(),
          pass_time(work.backward_weight, gpu, e, true).total()};
}

double op_seconds(const LayerSeconds& s, const std::string& op) {
  return op == "forward"          ? s.forward
         : op == "backward_input" ? s.backward_input
                                  : s.backward_weight;
}

/// Minimises a function that is unimodal on [lo, hi] (golden section, 80 steps: 1e-16 of the
/// interval).
double golden_minimum(const std::function<double(double)>& f, double lo, double hi) {
  const double r = (std::sqrt(5.0) - 1.0) / 2.0;
  double a = lo, b = hi;
  double c = b - r * (b - a), d = a + r * (b - a);
  double fc = f(c), fd = f(d);
  for (int i = 0; i < 80; ++i) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - r * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + r * (b - a);
      fd = f(d);
    }
  }
  return (a + b) / 2.0;
}

void add_items(std::vector<RooflineItem>& out, const char* pass, const PassWork& w,
               const GpuSpec& gpu, double e, bool backward) {
  for (const GemmWork& g : w.gemms)
    out.push_back({pass, g.name, true, g.flops(), gemm_seconds(g, gpu, e)});
  if (w.attention_flops > 0) {
    PassWork only;
    only.attention_flops = w.attention_flops;
    out.push_back({pass, "flash_attention", true, w.attention_flops,
                   pass_time(only, gpu, e, backward).total()});
  }
  for (const MemoryWork& m : w.memory) {
    PassWork only;
    only.memory.push_back(m);
    out.push_back({pass, m.name, false, m.bytes, pass_time(only, gpu, e, backward).total()});
  }
}

std::string ms(double seconds) { return fmt::format("{:.3f}", seconds * 1e3); }

}  // namespace

RooflineFit fit_roofline(const MeasuredProfile& profile, const TransformerModel& model,
                         const GpuSpec& gpu, const Sharding& sharding,
                         const std::vector<std::int64_t>& layers_per_stage) {
  if (layers_per_stage.size() != profile.stages.size()) {
    throw InputError(fmt::format("the profile has {} stages but {} layer counts were given",
                                 profile.stages.size(), layers_per_stage.size()));
  }
  if (gpu.efficiency.kind != EfficiencyModel::Kind::Roofline)
    throw InputError("fitting the roofline curve needs cluster.gpu.efficiency as a curve");
  const ComponentWork work = transformer_layer_work(model, sharding);
  const auto e = static_cast<double>(model.dtype.bytes);
  RooflineFit fit;
  fit.given = gpu.efficiency;
  const bool has_w = profile.ops.count("backward_weight") != 0;
  for (std::size_t i = 0; i < profile.stages.size(); ++i) {
    const StageCost& m = profile.stages[i];
    for (const char* op : {"forward", "backward_input", "backward_weight"}) {
      const std::string name = op;
      const Time t = name == "forward"          ? m.forward
                     : name == "backward_input" ? m.backward_input
                                                : m.backward_weight;
      if (name == "backward_weight" && !has_w) continue;
      fit.rows.push_back({name, static_cast<int>(i), layers_per_stage[i], 0, 0, t.seconds()});
    }
  }

  // Sum of squared relative errors of the rows `use` selects, at curve `eff`.
  GpuSpec trial = gpu;
  auto sse = [&](const EfficiencyModel& eff, const std::function<bool(const RooflineRow&)>& use) {
    trial.efficiency = eff;
    const LayerSeconds s = layer_seconds(work, trial, e);
    double total = 0;
    for (const RooflineRow& r : fit.rows) {
      if (!use(r) || !(r.measured_s > 0)) continue;
      const double err = static_cast<double>(r.layers) * op_seconds(s, r.op) / r.measured_s - 1.0;
      total += err * err;
    }
    return total;
  };
  auto is_w = [](const RooflineRow& r) { return r.op == "backward_weight"; };
  auto is_fb = [](const RooflineRow& r) { return r.op != "backward_weight"; };
  fit.fitted_gemm = std::any_of(fit.rows.begin(), fit.rows.end(),
                                [&](const RooflineRow& r) { return is_w(r) && r.measured_s > 0; });
  fit.fitted_memory = !work.forward.memory.empty() || !work.backward_input.memory.empty();
  if (!fit.fitted_gemm && !fit.fitted_memory)
    throw InputError("the profile has no W time and the model no memory-bound work to fit");
  EfficiencyModel eff = gpu.efficiency;
  // One coordinate of the curve at a time: the value in (0, 1] with the least squared error on
  // the rows it prices.
  auto refit = [&](double EfficiencyModel::*coordinate, const auto& rows) {
    eff.*coordinate = golden_minimum(
        [&](double v) {
          EfficiencyModel x = eff;
          x.*coordinate = v;
          return sse(x, rows);
        },
        1e-3, 1.0);
  };
  for (int round = 0; round < 3; ++round) {
    if (fit.fitted_gemm) refit(&EfficiencyModel::gemm_max, is_w);
    if (fit.fitted_memory) refit(&EfficiencyModel::memory, is_fb);
  }
  eff.source = "bubblesim calibrate";
  fit.fitted = eff;

  trial.efficiency = gpu.efficiency;
  const LayerSeconds given = layer_seconds(work, trial, e);
  trial.efficiency = eff;
  const LayerSeconds fitted = layer_seconds(work, trial, e);
  for (RooflineRow& r : fit.rows) {
    const auto n = static_cast<double>(r.layers);
    r.given_s = n * op_seconds(given, r.op);
    r.fitted_s = n * op_seconds(fitted, r.op);
    if (r.measured_s > 0) {
      fit.worst_given = std::max(fit.worst_given, std::abs(r.given_s / r.measured_s - 1.0));
      fit.worst_fitted = std::max(fit.worst_fitted, std::abs(r.fitted_s / r.measured_s - 1.0));
    }
  }
  add_items(fit.breakdown, "F", work.forward, trial, e, false);
  add_items(fit.breakdown, "B", work.backward_input, trial, e, true);
  add_items(fit.breakdown, "W", work.backward_weight, trial, e, true);
  return fit;
}

std::string roofline_fit_text(const RooflineFit& fit) {
  std::string out =
      "roofline model vs measured profile (times in ms; 'given' at the scenario's curve, "
      "'fitted' at the curve below)\n\n";
  TextTable table({"op", "stage", "layers", "given", "fitted", "measured", "given/measured",
                   "fitted/measured"});
  for (const RooflineRow& r : fit.rows) {
    const bool m = r.measured_s > 0;
    table.add_row({r.op, std::to_string(r.stage), std::to_string(r.layers), ms(r.given_s),
                   ms(r.fitted_s), ms(r.measured_s),
                   m ? fmt::format("{:.3f}", r.given_s / r.measured_s) : "-",
                   m ? fmt::format("{:.3f}", r.fitted_s / r.measured_s) : "-"});
  }
  out += table.render();
  const EfficiencyModel& g = fit.given;
  const EfficiencyModel& f = fit.fitted;
  out += fmt::format("\ngiven:  gemm_max {:.4g}, gemm_overhead {}, memory {:.4g}\n", g.gemm_max,
                     Time::from_seconds(g.gemm_overhead_s), g.memory);
  out +=
      fmt::format("fitted: gemm_max {:.4g}{}, gemm_overhead {} (kept), memory {:.4g}{}\n",
                  f.gemm_max, fit.fitted_gemm ? " (to the W rows)" : " (kept: no W rows)",
                  Time::from_seconds(f.gemm_overhead_s), f.memory,
                  fit.fitted_memory ? " (to the F and B rows)" : " (kept: no memory-bound work)");
  out += fmt::format(
      "largest error: {:.1f}% at the given curve, {:.1f}% at the fitted one\n"
      "as a scenario: cluster.gpu.efficiency: {{gemm_max: {:.4g}, gemm_overhead: {}, attention: "
      "{{forward: {:.4g}, backward: {:.4g}}}, memory: {:.4g}}}\n",
      100.0 * fit.worst_given, 100.0 * fit.worst_fitted, f.gemm_max,
      Time::from_seconds(f.gemm_overhead_s), f.attention_forward, f.attention_backward, f.memory);

  out +=
      "\none layer at the fitted curve (GEMMs and attention kernels in GFLOP, memory-bound "
      "kernels in MB):\n\n";
  TextTable items({"pass", "kernel", "GFLOP or MB", "ms"});
  items.align_left(1);
  double pass_total = 0;
  std::string pass;
  auto flush = [&]() {
    if (!pass.empty()) items.add_row({pass, "total", "", ms(pass_total)});
  };
  for (const RooflineItem& it : fit.breakdown) {
    if (it.pass != pass) {
      flush();
      pass = it.pass;
      pass_total = 0;
    }
    pass_total += it.seconds;
    items.add_row({it.pass, it.name,
                   it.gemm ? fmt::format("{:.2f} GFLOP", it.amount / 1e9)
                           : fmt::format("{:.1f} MB", it.amount / 1e6),
                   ms(it.seconds)});
  }
  flush();
  out += items.render();
  return out;
}

}  // namespace bubblesim
