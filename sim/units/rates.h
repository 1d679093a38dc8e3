#pragma once
// Rates: Bandwidth (bytes per second) and FlopRate (floating-point operations per second).
// Rates are real numbers; the durations they produce are rounded to integer picoseconds.

#include <fmt/format.h>

#include <compare>
#include <string>

#include "sim/units/bytes.h"
#include "sim/units/time.h"

namespace bubblesim {

class Bandwidth {
 public:
  constexpr Bandwidth() = default;
  static constexpr Bandwidth bytes_per_second(double v) { return Bandwidth(v); }
  constexpr double bytes_per_second() const { return bytes_per_s_; }
  friend constexpr auto operator<=>(Bandwidth, Bandwidth) = default;

 private:
  constexpr explicit Bandwidth(double v) : bytes_per_s_(v) {}
  double bytes_per_s_ = 0.0;
};

class FlopRate {
 public:
  constexpr FlopRate() = default;
  static constexpr FlopRate flops_per_second(double v) { return FlopRate(v); }
  constexpr double flops_per_second() const { return flops_per_s_; }
  friend constexpr auto operator<=>(FlopRate, FlopRate) = default;

 private:
  constexpr explicit FlopRate(double v) : flops_per_s_(v) {}
  double flops_per_s_ = 0.0;
};

/// Time to move `amount` at `rate` (rounded to the nearest picosecond).
Time transfer_time(Bytes amount, Bandwidth rate);
/// Time to execute `flops` operations at `rate`.
Time compute_time(double flops, FlopRate rate);

std::string to_string(Bandwidth b);  // "25GB/s"
std::string to_string(FlopRate f);   // "989TFLOPS"

}  // namespace bubblesim

template <>
struct fmt::formatter<bubblesim::Bandwidth> : fmt::formatter<std::string> {
  auto format(bubblesim::Bandwidth b, format_context& ctx) const {
    return fmt::formatter<std::string>::format(bubblesim::to_string(b), ctx);
  }
};
template <>
struct fmt::formatter<bubblesim::FlopRate> : fmt::formatter<std::string> {
  auto format(bubblesim::FlopRate f, format_context& ctx) const {
    return fmt::formatter<std::string>::format(bubblesim::to_string(f), ctx);
  }
};
