// `bubblesim calibrate PROFILE`: the analytical transformer cost model next to a measured cost
// profile (sim/calibration/calibration.h; docs/calibration.md).
#include <fmt/format.h>

#include <cstdio>
#include <memory>
#include <stdexcept>

#include "sim/calibration/calibration.h"
#include "sim/calibration/roofline_fit.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/scenario/transformer_costs.h"
#include "sim/units/diagnostics.h"
#include "sim/units/quantity_parser.h"
#include "sim/units/text_file.h"
#include "tools/cli/command_set.h"

namespace bubblesim {
namespace {

struct CalibrateOptions {
  std::string profile, model_file, dtype, flops;
  std::int64_t hidden = 0, heads = 0, seq_len = 0, micro_batch_size = 0, layers_per_stage = 0;
  double efficiency = 0;
};

int command_calibrate(const Registry& registry, const CalibrateOptions& o) {
  TransformerModel model;
  GpuSpec gpu;
  Sharding sharding;
  if (!o.model_file.empty()) {
    Scenario sc = load_scenario_file(o.model_file, registry);
    if (!sc.model || !sc.gpu) {
      throw InputError(fmt::format(
          "{}: --model needs a scenario with 'model:' and 'cluster: {{gpu: ...}}'", o.model_file));
    }
    model = *sc.model;
    gpu = *sc.gpu;
    sharding.tp = sc.parallelism.tp;
    sharding.sp = sc.parallelism.sp;
  } else {
    std::vector<std::string> missing;
    if (o.hidden == 0) missing.emplace_back("--hidden");
    if (o.heads == 0) missing.emplace_back("--heads");
    if (o.seq_len == 0) missing.emplace_back("--seq-len");
    if (o.flops.empty()) missing.emplace_back("--flops");
    if (o.layers_per_stage == 0) missing.emplace_back("--layers-per-stage");
    if (!missing.empty()) {
      throw InputError(
          fmt::format("calibrate: give --model FILE.yaml or the model as flags; missing {}",
                      fmt::join(missing, ", ")));
    }
  }
  // Flags override the file.
  if (o.hidden > 0) model.hidden = o.hidden;
  if (o.heads > 0) model.attention.heads = o.heads;
  if (o.seq_len > 0) model.seq_len = o.seq_len;
  if (o.micro_batch_size > 0) model.micro_batch_size = o.micro_batch_size;
  if (!o.dtype.empty()) {
    model.dtype.name = o.dtype;
    model.dtype.bytes = o.dtype == "fp32" ? 4 : o.dtype == "fp8" ? 1 : 2;
  }
  if (model.hidden % model.attention.heads != 0) {
    throw InputError(fmt::format("calibrate: hidden size {} is not divisible by {} heads",
                                 model.hidden, model.attention.heads));
  }
  if (!o.flops.empty()) {
    try {
      gpu.flops = parse_flop_rate(o.flops);
    } catch (const QuantityError& e) {
      throw InputError(fmt::format("--flops '{}': {}", o.flops, e.what()));
    }
  }
  if (o.efficiency > 0) {  // one number replaces the curve
    gpu.efficiency.kind = EfficiencyModel::Kind::Constant;
    gpu.efficiency.constant = o.efficiency;
  }

  const std::string text = read_text_file(o.profile);
  const int stages = profile_stage_count(text);
  if (stages == 0)
    throw InputError(
        fmt::format("{}: the profile has no rows (see docs/profile-format.md)", o.profile));
  const MeasuredProfile profile = read_cost_profile_csv(text, o.profile, stages);

  std::vector<std::int64_t> layers;
  if (o.layers_per_stage > 0) {
    layers.assign(static_cast<std::size_t>(stages), o.layers_per_stage);
  } else {
    try {
      layers = split_layers(model.layers, stages);
    } catch (const std::invalid_argument& e) {
      throw InputError(
          fmt::format("{}: {} (the profile has {} stages)", o.model_file, e.what(), stages));
    }
  }
  // A curve (a GPU preset or `efficiency: {...}`) is fitted; one number is fitted as before.
  std::string out;
  if (gpu.efficiency.kind == EfficiencyModel::Kind::Roofline) {
    try {
      out = roofline_fit_text(fit_roofline(profile, model, gpu, sharding, layers));
    } catch (const std::invalid_argument& e) {
      throw InputError(fmt::format("{}: {}", o.model_file, e.what()));
    }
    out += "\nthe one-number model (every FLOP at peak x e), for comparison:\n";
  }
  out += calibration_text(calibrate(profile, model, gpu, layers));
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace

void add_calibrate_commands(CLI::App& app, CommandSet& commands) {
  auto o = std::make_shared<CalibrateOptions>();
  CLI::App* cmd = app.add_subcommand("calibrate",
                                     "compare a measured cost profile with the analytical "
                                     "transformer model and fit its efficiency");
  cmd->add_option("profile", o->profile,
                  "cost profile CSV (tools/profile/profile_block.py writes one)")
      ->required();
  cmd->add_option("--model", o->model_file,
                  "scenario YAML with 'model:' and 'cluster.gpu:' (its layers are split over the "
                  "profile's stages)");
  cmd->add_option("--hidden", o->hidden, "hidden size (overrides the model file)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--heads", o->heads, "attention heads")->check(CLI::PositiveNumber);
  cmd->add_option("--seq-len", o->seq_len, "sequence length")->check(CLI::PositiveNumber);
  cmd->add_option("--micro-batch-size", o->micro_batch_size, "microbatch size (default 1)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--layers-per-stage", o->layers_per_stage,
                  "transformer layers per pipeline stage")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--dtype", o->dtype, "bf16 (default), fp16, fp32 or fp8")
      ->check(CLI::IsMember({"bf16", "fp16", "fp32", "fp8"}));
  cmd->add_option("--flops", o->flops, "peak FLOP rate of the GPU, e.g. 989TFLOPS");
  cmd->add_option("--efficiency", o->efficiency, "fraction of peak the model assumes (default 1)")
      ->check(CLI::Range(1e-9, 1.0));
  commands.add(cmd,
               [o](CommandContext& context) { return command_calibrate(context.registry, *o); });
}

}  // namespace bubblesim
