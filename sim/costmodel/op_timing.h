#pragma once
// Time of a pass's work (layer_work.h) on a GPU under `cluster.gpu.efficiency` (docs/models.md):
//
//   constant e   every FLOP at peak x e (GEMMs and attention kernels); memory-bound work takes no
//                time. This is the published formula's model (Narayanan et al. 2021).
//   roofline     a GEMM of F = 2MNK FLOPs takes gemm_overhead + F / (peak x gemm_max), but never
//                less than moving its operands (M K + K N + M N elements) at the HBM bandwidth x
//                memory; FlashAttention kernels run at attention_forward / attention_backward of
//                peak on their executed FLOPs; elementwise, normalisation and loss kernels at the
//                HBM bandwidth x memory.
//
// Overhead plus throughput is the simplest curve with the two facts GEMM benchmarks show: large
// GEMMs approach a ceiling below peak (power and clock limits, gemm_max), and small ones lose
// efficiency as a fixed per-call cost (launch, prologue, the last partial wave) stops being
// negligible: the efficiency of a GEMM is gemm_max F / (F + gemm_max peak gemm_overhead).
// `bubblesim calibrate` fits gemm_max and memory to a measured profile; GPU presets ship
// values with their sources (scenarios/presets/gpus.yaml).

#include <string>

#include "sim/costmodel/layer_work.h"
#include "sim/costmodel/model_spec.h"

namespace bubblesim {

/// `model.fp8_linear` in one pass: off; the linear GEMMs in FP8 (W: its operands were cast in F
/// and B); or the linear GEMMs in FP8 with the casts of their inputs (F: each GEMM's input, B:
/// each GEMM's output gradient).
enum class Fp8Gemms { Off, On, OnWithCasts };

struct PassTime {
  double gemm_s = 0;
  double attention_s = 0;
  double memory_s = 0;
  double total() const { return gemm_s + attention_s + memory_s; }
};

/// Fraction of `peak` a GEMM of `flops` FLOPs reaches on the curve (before the memory bound).
double gemm_efficiency(const EfficiencyModel& model, double peak, double flops);

/// `first_principles.gemm_waves`: the time of a GEMM's tiles in whole waves over the GPU's SMs
/// against its FLOPs alone (>= 1): ceil(tiles / SMs) x SMs x tile area over M N, each batch
/// member its own tiles, the tile in whichever orientation wastes less; 1 when the GPU's preset
/// gives no SM count or tile (NVIDIA Matrix Multiplication Background User's Guide, sec. 3).
double wave_factor(const GemmWork& gemm, const GpuMeasured& hw);

/// `first_principles.sustained_clock`: the share of the curve's compute rate the chip holds at
/// its power cap (the preset's sustained_clock), else 1; times the share a `power_limit` below
/// the TDP leaves of that (GpuSpec::power_factor).
double compute_rate_factor(const GpuSpec& gpu);

/// E[max of n independent standard normals] (0 for n <= 1), by quadrature of
/// n x phi(x) Phi(x)^(n-1): 2.07 for 32, 3.55 for 3072.
double expected_max_normal(std::int64_t n);

/// `first_principles.slowest_gpu`: how much longer compute takes on the slowest of `gpus` chips
/// whose sustained speed varies with the preset's chip_spread (cv) than on the median one:
/// 1 + E[max of n normals] x cv, else 1. A synchronous step (TP collectives, the pipeline's
/// transfers, the data-parallel all-reduce) runs at that chip's pace (docs/first-principles.md).
double slowest_gpu_factor(const GpuSpec& gpu, std::int64_t gpus);

/// `first_principles.attention_kernels`: the published speed (FLOP/s, causal, as the kernels'
/// papers count it) of fused attention kernel `backend` on `gpu` for calls of `head_dim` and
/// `key_len` keys: linear in the head dimension and in log2 of the length between the table's
/// points, held at its ends (a 32K or 1M sequence runs at the longest measured length's rate;
/// the kernels saturate there). The causal backward is the non-causal backward times the causal
/// forward over the non-causal forward at that point. 0 when the mechanism is off, the GPU has no
/// table for `backend`, or the shape is unknown (the efficiency's flat fractions apply).
double attention_rate(const GpuSpec& gpu, const std::string& backend, double head_dim,
                      double key_len, bool backward);

/// Seconds of one GEMM on `gpu` (element_bytes per operand element).
double gemm_seconds(const GemmWork& gemm, const GpuSpec& gpu, double element_bytes);

/// The same at the given peak FLOP rate (the FP8 peak for `model.fp8_linear`).
double gemm_seconds_at(const GemmWork& gemm, const GpuSpec& gpu, double peak, double element_bytes);

/// Seconds of `work` on `gpu`; `backward` picks the attention kernels' backward efficiency.
/// `fp8` (`model.fp8_linear`): the linear GEMMs (GemmWork::linear) run at the GPU's FP8 peak,
/// on the same efficiency curve up to its FP8 ceiling (gemm_max_fp8), with 1-byte operands; the
/// attention core, router, LM head and memory-bound kernels stay in the model's dtype. With
/// OnWithCasts the roofline also moves fp8_cast_bytes at the HBM bandwidth. Throws
/// std::invalid_argument when the roofline model has no memory bandwidth, or `fp8` is on and the
/// GPU has no FP8 peak. `attention_backend` (model.attention_backend) picks the attention
/// kernels' published rate (attention_rate) where the GPU has its table.
PassTime pass_time(const PassWork& work, const GpuSpec& gpu, double element_bytes, bool backward,
                   Fp8Gemms fp8 = Fp8Gemms::Off, const std::string& attention_backend = {});

/// HBM bytes of casting each linear GEMM's first operand (M x K: the input in F, the output
/// gradient in B) to FP8 with its transpose for W, as Transformer Engine's
/// fp8_cast_transpose_fused does: read once in the dtype, write two 1-byte copies.
double fp8_cast_bytes(const PassWork& work, double element_bytes);

/// "0.55 of peak" or "roofline: GEMM 6.5us + F / (0.75 peak), attention 0.6/0.45 (F/B), memory
/// 0.8 of 3.35TB/s" for reports.
std::string describe_efficiency(const GpuSpec& gpu);

}  // namespace bubblesim
