#pragma once
// Internal to the cost model: the first-principles mechanisms of `cluster.gpu`
// (docs/first-principles.md): the numbers a GPU preset gives for them (gpus.yaml), which are on
// (every one whose numbers the preset gives, unless `first_principles` turns it off) and why the
// others are off, and their part of the JSON report. gpu_reader.cpp and model_json.cpp use it.

#include <nlohmann/json.hpp>
#include <optional>

#include "sim/costmodel/model_spec.h"
#include "sim/units/diagnostics.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim {

/// The preset's numbers for the mechanisms: nccl, sustained_clock, chip_spread, sms, gemm_tile,
/// attention_kernels, compute_capability (nccl_tuning), tdp and power_caps.
void read_measured(const YamlNode& preset, GpuMeasured& hw, DiagnosticList& diags);

/// Sets gpu.mechanisms: without `node` (no `first_principles` key) every mechanism whose numbers
/// the preset gives; `true` the same (refused when there are none); `false` none; a map switches
/// each, a switch turned on without its numbers is refused naming the key. Records why each one
/// that is off is off. `model` (when known) names the attention kernel whose table is needed.
bool read_first_principles(const std::optional<YamlNode>& node, GpuSpec& gpu,
                           const TransformerModel* model, DiagnosticList& diags);

/// `cluster.gpu.power_limit` (and the user's `power_caps`): sets gpu.power_limit_w and
/// gpu.power_factor from the sustained rate measured at that cap (the preset's power_caps, or the
/// scenario's own), linear in watts between the measured caps and the TDP (where it is 1).
/// Refused above the TDP, below the lowest measured cap, and on a chip without a measurement.
bool read_power_limit(MapReader& gpu_keys, GpuSpec& gpu, DiagnosticList& diags);

/// `scenario.cluster.gpu.first_principles`: `on` (each mechanism on with the numbers it uses),
/// `off` (each mechanism off and why) and `source` (the scenario's key or the preset's defaults).
nlohmann::json first_principles_json(const GpuSpec& gpu);

}  // namespace bubblesim
