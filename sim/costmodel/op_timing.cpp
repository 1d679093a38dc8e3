#include "sim/costmodel/op_timing.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <stdexcept>

namespace bubblesim {

double gemm_efficiency(const EfficiencyModel& model, double peak, double flops) {
  if (model.kind == EfficiencyModel::Kind::Constant) return model.constant;
  if (!(flops > 0)) return model.gemm_max;
  return flops / (peak * (model.gemm_overhead_s + flops / (peak * model.gemm_max)));
}

namespace {

double peak_of(const GpuSpec& gpu) {
  const double peak = gpu.flops.flops_per_second();
  if (!(peak > 0)) throw std::invalid_argument("the GPU's peak FLOP rate must be positive");
  return peak;
}

double bandwidth_of(const GpuSpec& gpu) {
  if (!gpu.memory_bandwidth || !(gpu.memory_bandwidth->bytes_per_second() > 0)) {
    throw std::invalid_argument(
        "the roofline efficiency model needs the GPU's memory bandwidth "
        "(cluster.gpu.memory_bandwidth or a GPU preset)");
  }
  return gpu.memory_bandwidth->bytes_per_second();
}

}  // namespace

double wave_factor(const GemmWork& gemm, const GpuMeasured& hw) {
  if (hw.sms <= 0 || hw.tile_m <= 0 || hw.tile_n <= 0 || !(gemm.m > 0) || !(gemm.n > 0)) return 1.0;
  // Either orientation of the tile (the library transposes as it likes): the one with fewer
  // padded tile-waves. Each batch member is its own set of tiles.
  auto factor = [&](double tm, double tn) {
    const double tiles = std::ceil(gemm.m / tm) * std::ceil(gemm.n / tn) * std::ceil(gemm.batch);
    const double sms = static_cast<double>(hw.sms);
    const double waves = std::ceil(tiles / sms);
    return waves * sms * tm * tn / (gemm.m * gemm.n * gemm.batch);
  };
  const auto tm = static_cast<double>(hw.tile_m), tn = static_cast<double>(hw.tile_n);
  return std::max(1.0, std::min(factor(tm, tn), factor(tn, tm)));
}

double compute_rate_factor(const GpuSpec& gpu) {
  const double sustained = gpu.mechanisms.sustained_clock && gpu.measured.sustained_clock > 0
                               ? gpu.measured.sustained_clock
                               : 1.0;
  return sustained * gpu.power_factor;  // cluster.gpu.power_limit: the share the cap leaves
}

double expected_max_normal(std::int64_t n) {
  if (n <= 1) return 0.0;
  // E[max] = integral of x n phi(x) Phi(x)^(n-1) over the line; the integrand is negligible
  // outside [-8, 9] for any n up to 10^7. Simpson's rule on 8,500 intervals: 1e-6 accurate.
  constexpr double kLow = -8.0, kHigh = 9.0;
  constexpr int kIntervals = 8500;
  const double step = (kHigh - kLow) / kIntervals, nd = static_cast<double>(n);
  auto f = [&](double x) {
    const double phi = std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
    const double cdf = 0.5 * std::erfc(-x / std::sqrt(2.0));
    return x * nd * phi * std::pow(cdf, nd - 1.0);
  };
  double sum = f(kLow) + f(kHigh);
  for (int i = 1; i < kIntervals; ++i) sum += f(kLow + i * step) * (i % 2 == 1 ? 4.0 : 2.0);
  return sum * step / 3.0;
}

namespace {

/// Linear interpolation of `ys` over `xs` (ascending) at x, held at the ends.
double interpolate(const std::vector<double>& xs, const std::vector<double>& ys, double x) {
  if (xs.empty() || ys.size() != xs.size()) return 0.0;
  if (x <= xs.front()) return ys.front();
  if (x >= xs.back()) return ys.back();
  const auto hi = static_cast<std::size_t>(std::upper_bound(xs.begin(), xs.end(), x) - xs.begin());
  const double t = (x - xs[hi - 1]) / (xs[hi] - xs[hi - 1]);
  return ys[hi - 1] + t * (ys[hi] - ys[hi - 1]);
}

/// One part of a table at (head_dim, key_len): log2 of the length within each head dimension's
/// row, then linear between head dimensions.
double table_rate(const AttentionRateTable& t, const std::vector<std::vector<double>>& rows,
                  double head_dim, double key_len) {
  std::vector<double> log_seq;
  for (double s : t.seq_len) log_seq.push_back(std::log2(s));
  std::vector<double> at_len;
  for (const auto& row : rows) at_len.push_back(interpolate(log_seq, row, std::log2(key_len)));
  return interpolate(t.head_dims, at_len, head_dim);
}

}  // namespace

double attention_rate(const GpuSpec& gpu, const std::string& backend, double head_dim,
                      double key_len, bool backward) {
  if (!gpu.mechanisms.attention_kernels || !(head_dim > 0) || !(key_len > 0)) return 0.0;
  const auto it = gpu.measured.attention_kernels.find(backend);
  if (it == gpu.measured.attention_kernels.end()) return 0.0;
  const AttentionRateTable& t = it->second;
  const double causal = table_rate(t, t.forward_causal, head_dim, key_len);
  if (!backward) return causal;
  const double full = table_rate(t, t.forward, head_dim, key_len);
  return full > 0 ? table_rate(t, t.backward, head_dim, key_len) * causal / full : 0.0;
}

double slowest_gpu_factor(const GpuSpec& gpu, std::int64_t gpus) {
  if (!gpu.mechanisms.slowest_gpu || !(gpu.measured.chip_spread > 0)) return 1.0;
  return 1.0 + expected_max_normal(gpus) * gpu.measured.chip_spread;
}

double gemm_seconds(const GemmWork& gemm, const GpuSpec& gpu, double element_bytes) {
  return gemm_seconds_at(gemm, gpu, peak_of(gpu), element_bytes);
}

double gemm_seconds_at(const GemmWork& gemm, const GpuSpec& gpu, double peak,
                       double element_bytes) {
  const EfficiencyModel& eff = gpu.efficiency;
  const double flops = gemm.flops();
  if (eff.kind == EfficiencyModel::Kind::Constant) return flops / (peak * eff.constant);
  // One call (a batched GEMM is one call): a fixed overhead plus its FLOPs at the ceiling.
  // FP8 operands (1 byte) have a ceiling of their own when the GPU's curve gives one.
  const double ceiling =
      element_bytes == 1.0 && eff.gemm_max_fp8 > 0 ? eff.gemm_max_fp8 : eff.gemm_max;
  // docs/first-principles.md: whole waves of output tiles (gemm_waves) at the sustained clock.
  double busy = flops / (peak * ceiling * compute_rate_factor(gpu));
  if (gpu.mechanisms.gemm_waves) busy *= wave_factor(gemm, gpu.measured);
  const double compute = eff.gemm_overhead_s + busy;
  const double traffic = gemm.bytes(element_bytes) / (bandwidth_of(gpu) * eff.memory);
  return std::max(compute, traffic);
}

double fp8_cast_bytes(const PassWork& work, double element_bytes) {
  double bytes = 0;
  for (const GemmWork& g : work.gemms) {
    if (g.linear) bytes += g.m * g.k * g.batch * (element_bytes + 2.0);
  }
  return bytes;
}

PassTime pass_time(const PassWork& work, const GpuSpec& gpu, double element_bytes, bool backward,
                   Fp8Gemms fp8, const std::string& attention_backend) {
  const bool fp8_linear = fp8 != Fp8Gemms::Off;
  const EfficiencyModel& eff = gpu.efficiency;
  const double peak = peak_of(gpu);
  const double fp8_peak = gpu.flops_fp8.flops_per_second();
  if (fp8_linear && !(fp8_peak > 0)) {
    throw std::invalid_argument("model.fp8_linear needs the GPU's FP8 peak");
  }
  PassTime t;
  for (const GemmWork& g : work.gemms) {
    t.gemm_s += fp8_linear && g.linear ? gemm_seconds_at(g, gpu, fp8_peak, 1.0)
                                       : gemm_seconds_at(g, gpu, peak, element_bytes);
  }
  if (eff.kind == EfficiencyModel::Kind::Constant) {
    t.attention_s = work.attention_flops / (peak * eff.constant);
    return t;  // the one-number model: memory-bound work is folded into e
  }
  // The kernel's published rate at this call's shape, else the flat fraction of peak.
  const double published = attention_rate(gpu, attention_backend, work.attention_head_dim,
                                          work.attention_key_len, backward);
  const double rate = published > 0
                          ? published
                          : peak * (backward ? eff.attention_backward : eff.attention_forward);
  if (work.attention_flops > 0)
    t.attention_s = work.attention_flops / (rate * compute_rate_factor(gpu));
  double bytes = work.memory_bytes();
  if (fp8 == Fp8Gemms::OnWithCasts) bytes += fp8_cast_bytes(work, element_bytes);
  if (bytes > 0) t.memory_s = bytes / (bandwidth_of(gpu) * eff.memory);
  return t;
}

std::string describe_efficiency(const GpuSpec& gpu) {
  const EfficiencyModel& e = gpu.efficiency;
  if (e.kind == EfficiencyModel::Kind::Constant) return fmt::format("{:g} of peak", e.constant);
  return fmt::format(
      "roofline: GEMM {} + F / ({:.3g} peak){}, attention {:.3g}/{:.3g} of peak (F/B), "
      "memory-bound {:.3g} of {}",
      Time::from_seconds(e.gemm_overhead_s), e.gemm_max,
      e.gemm_max_fp8 > 0 ? fmt::format(" (FP8: {:.3g} of the FP8 peak)", e.gemm_max_fp8)
                         : std::string(),
      e.attention_forward, e.attention_backward, e.memory,
      gpu.memory_bandwidth ? to_string(*gpu.memory_bandwidth) : std::string("(no bandwidth)"));
}

}  // namespace bubblesim
