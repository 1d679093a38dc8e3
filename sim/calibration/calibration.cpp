#include "sim/calibration/calibration.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

#include "sim/report/text_table.h"
#include "sim/scenario/transformer_costs.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

std::string format_seconds(double seconds) { return to_string(Time::from_seconds(seconds)); }

std::string format_value(const CalibrationRow& row, double v) {
  return row.is_time ? format_seconds(v)
                     : to_string(Bytes(static_cast<std::int64_t>(std::llround(v))));
}

}  // namespace

int profile_stage_count(std::string_view csv) {
  int stages = 0;
  bool header_seen = false;
  while (!csv.empty()) {
    const std::size_t end = csv.find('\n');
    std::string_view line = trim(csv.substr(0, end));
    csv = end == std::string_view::npos ? std::string_view{} : csv.substr(end + 1);
    if (line.empty() || line.front() == '#') continue;
    if (!header_seen) {
      header_seen = true;
      continue;
    }
    const std::size_t c1 = line.find(',');
    if (c1 == std::string_view::npos) continue;
    std::string_view field = trim(line.substr(c1 + 1, line.find(',', c1 + 1) - c1 - 1));
    int stage = -1;
    auto [ptr, ec] = std::from_chars(field.data(), field.data() + field.size(), stage);
    if (ec == std::errc{} && ptr == field.data() + field.size() && stage >= 0 &&
        stage < 1'000'000) {
      stages = std::max(stages, stage + 1);
    }
  }
  return stages;
}

CalibrationResult calibrate(const MeasuredProfile& profile, const TransformerModel& model,
                            const GpuSpec& gpu, const std::vector<std::int64_t>& layers_per_stage) {
  if (layers_per_stage.size() != profile.stages.size()) {
    throw InputError(fmt::format("the profile has {} stages but {} layer counts were given",
                                 profile.stages.size(), layers_per_stage.size()));
  }
  const double peak = gpu.flops.flops_per_second();
  if (!(peak > 0) || !(gpu.nominal_efficiency() > 0)) {
    throw InputError("calibration needs a positive peak FLOP rate and efficiency");
  }
  const TransformerLayerCosts layer = transformer_layer_costs(model);
  const double rate = peak * gpu.nominal_efficiency();
  const auto has = [&](const char* op) { return profile.ops.count(op) != 0; };

  CalibrationResult r;
  r.layers_per_stage = layers_per_stage;
  r.peak_flops = peak;
  r.given_efficiency = gpu.nominal_efficiency();
  r.has_lm_head = model.embedding.vocab > 0;
  for (std::size_t i = 0; i < profile.stages.size(); ++i) {
    const StageCost& m = profile.stages[i];
    const auto n = static_cast<double>(layers_per_stage[i]);
    const int stage = static_cast<int>(i);
    auto time_row = [&](const char* op, double flops, Time measured) {
      r.rows.push_back({op, stage, true, n * flops, n * flops / rate, measured.seconds(), {}});
      if (auto cv = profile.cv.find(op); cv != profile.cv.end() && i < cv->second.size())
        r.rows.back().cv = cv->second[i];
    };
    auto bytes_row = [&](const char* op, double model_bytes, Bytes measured) {
      r.rows.push_back({op, stage, false, 0.0, model_bytes, measured.as_double(), {}});
    };
    time_row("forward", layer.forward_flops, m.forward);
    time_row("backward_input", layer.backward_input_flops, m.backward_input);
    if (has("backward_weight"))
      time_row("backward_weight", layer.backward_weight_flops, m.backward_weight);
    if (has("activation")) bytes_row("activation", n * layer.activation_bytes, m.activation);
    if (has("weight_grad")) bytes_row("weight_grad", n * layer.weight_grad_bytes, m.weight_grad);
    if (has("p2p")) bytes_row("p2p", layer.hidden_state_bytes, m.p2p);

    OrderingCheck o;
    o.stage = stage;
    o.forward = m.forward;
    o.backward_input = m.backward_input;
    o.backward_weight = m.backward_weight;
    o.w_below_f = m.backward_weight < m.forward;
    o.f_below_b = m.forward < m.backward_input;
    r.ordering.push_back(o);
  }

  double sum_ff = 0, sum_ft = 0, sum_f = 0, sum_t = 0;
  for (const CalibrationRow& row : r.rows) {
    if (!row.is_time) continue;
    sum_ff += row.flops * row.flops;
    sum_ft += row.flops * row.measured;
    sum_f += row.flops;
    sum_t += row.measured;
  }
  if (!(sum_ft > 0) || !(sum_t > 0)) {
    throw InputError("the profile has no positive F/B/W time to fit the efficiency to");
  }
  r.fitted_efficiency = sum_ff / (peak * sum_ft);
  r.total_efficiency = sum_f / (peak * sum_t);
  for (const CalibrationRow& row : r.rows) {
    if (!row.is_time || !(row.measured > 0)) continue;
    const double fitted = row.flops / (peak * r.fitted_efficiency);
    r.worst_time_error = std::max(r.worst_time_error, std::abs(fitted / row.measured - 1.0));
  }
  return r;
}

std::string calibration_text(const CalibrationResult& r) {
  std::string layers;
  for (std::size_t i = 0; i < r.layers_per_stage.size(); ++i) {
    layers += fmt::format("{}{}", i == 0 ? "" : ", ", r.layers_per_stage[i]);
  }
  std::string out = fmt::format(
      "analytical model vs measured profile: {} stage(s), layers per stage {}; peak {}, efficiency "
      "{:g}\n\n",
      r.layers_per_stage.size(), layers, FlopRate::flops_per_second(r.peak_flops),
      r.given_efficiency);
  // The measured cv column only when the profile has one (docs/profile-format.md).
  const bool has_cv =
      std::any_of(r.rows.begin(), r.rows.end(), [](const CalibrationRow& x) { return x.cv; });
  std::vector<std::string> heading{"op", "stage", "model", "measured", "measured/model"};
  if (has_cv) heading.push_back("measured cv");
  TextTable table(heading);
  for (const CalibrationRow& row : r.rows) {
    std::vector<std::string> cells{row.op, std::to_string(row.stage), format_value(row, row.model),
                                   format_value(row, row.measured),
                                   row.model > 0 ? fmt::format("{:.3f}", row.ratio()) : "-"};
    if (has_cv) cells.push_back(row.cv ? fmt::format("{:.2f}%", 100.0 * *row.cv) : "-");
    table.add_row(cells);
  }
  out += table.render();
  out += fmt::format(
      "\nfitted efficiency (least squares on the F/B/W times): {:.4g} (given {:g}); at it the "
      "model's times are "
      "within {:.1f}% of the measured ones\n",
      r.fitted_efficiency, r.given_efficiency, 100.0 * r.worst_time_error);
  out += fmt::format("efficiency from the totals (model FLOPs / measured time / peak): {:.4g}\n",
                     r.total_efficiency);

  std::vector<int> violated;
  for (const OrderingCheck& o : r.ordering) {
    if (!o.holds()) violated.push_back(o.stage);
  }
  if (violated.empty()) {
    out += fmt::format(
        "W < F < B: holds on all {} stage(s), as the zero-bubble paper's T_W < T_F < T_B assumes\n",
        r.ordering.size());
  } else {
    out += fmt::format(
        "W < F < B: violated on {} of {} stage(s); the zero-bubble paper assumes T_W < T_F < T_B\n",
        violated.size(), r.ordering.size());
  }
  for (const OrderingCheck& o : r.ordering) {
    std::string why;
    if (!o.w_below_f) why += " W >= F";
    if (!o.f_below_b) why += " F >= B";
    out += fmt::format("  stage {}: W {}, F {}, B {}: {}\n", o.stage, o.backward_weight, o.forward,
                       o.backward_input,
                       o.holds() ? "holds" : "violated (" + std::string(trim(why)) + ")");
  }
  if (r.has_lm_head) {
    out +=
        "note: the LM head and the embedding are left out: the profile measures transformer layers "
        "only\n";
  }
  return out;
}

}  // namespace bubblesim
