// Conversions and renderings of the quantity types.
#include <fmt/format.h>

#include <array>
#include <cmath>
#include <string>

#include "sim/units/bytes.h"
#include "sim/units/rates.h"
#include "sim/units/time.h"

namespace bubblesim {

Time Time::from_seconds(double seconds) {
  double ps = std::nearbyint(seconds * 1e12);
  if (!std::isfinite(ps) || ps >= 9223372036854775808.0 || ps < -9223372036854775808.0) {
    throw OverflowError(fmt::format(
        "a time of {:.4g} s does not fit in the simulated clock (64-bit picoseconds: at most "
        "2562047h, about 106 days)",
        seconds));
  }
  return Time(static_cast<std::int64_t>(ps));
}

std::string to_string(Time t) {
  struct Unit {
    std::int64_t ps;
    const char* name;
  };
  static constexpr std::array kUnits{Unit{1'000'000'000'000, "s"}, Unit{1'000'000'000, "ms"},
                                     Unit{1'000'000, "us"}, Unit{1'000, "ns"}};
  std::int64_t ps = t.ps();
  std::int64_t mag = ps < 0 ? -ps : ps;
  for (const Unit& u : kUnits) {
    if (mag >= u.ps) {
      // Exact decimal: integer part and up to 12 fractional digits without trailing zeros.
      std::int64_t whole = mag / u.ps, frac = mag % u.ps;
      std::string s = fmt::format("{}{}", ps < 0 ? "-" : "", whole);
      if (frac != 0) {
        int digits = 0;
        for (std::int64_t d = u.ps; d > 1; d /= 10) ++digits;
        std::string f = fmt::format("{:0{}}", frac, digits);
        while (!f.empty() && f.back() == '0') f.pop_back();
        s += "." + f;
      }
      return s + u.name;
    }
  }
  return fmt::format("{}ps", ps);
}

std::string to_string(Bytes b) {
  struct Unit {
    std::int64_t size;
    const char* name;
  };
  static constexpr std::array kUnits{Unit{1LL << 50, "PiB"}, Unit{1LL << 40, "TiB"},
                                     Unit{1LL << 30, "GiB"}, Unit{1LL << 20, "MiB"},
                                     Unit{1LL << 10, "KiB"}};
  const std::int64_t n = b.count();
  const std::int64_t mag = n < 0 ? -n : n;
  for (const Unit& u : kUnits) {
    if (mag >= u.size) {
      if (n % u.size == 0) return fmt::format("{}{}", n / u.size, u.name);
      // Not a whole number of units: two decimals, trailing zeros dropped ("23.5GiB").
      std::string v = fmt::format("{:.2f}", static_cast<double>(n) / static_cast<double>(u.size));
      while (v.back() == '0') v.pop_back();
      if (v.back() == '.') v.pop_back();
      return v + u.name;
    }
  }
  return fmt::format("{}B", n);
}

Time transfer_time(Bytes amount, Bandwidth rate) {
  return Time::from_seconds(amount.as_double() / rate.bytes_per_second());
}

Time compute_time(double flops, FlopRate rate) {
  return Time::from_seconds(flops / rate.flops_per_second());
}

std::string to_string(Bandwidth b) { return fmt::format("{:g}GB/s", b.bytes_per_second() / 1e9); }
std::string to_string(FlopRate f) { return fmt::format("{:g}TFLOPS", f.flops_per_second() / 1e12); }

}  // namespace bubblesim
