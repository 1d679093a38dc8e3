#include "sim/units/quantity_parser.h"

#include <fmt/format.h>

#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <string>

#include "sim/units/text_trim.h"

namespace bubblesim {
namespace {

struct UnitScale {
  std::string_view suffix;
  double scale;  // multiplier to the base unit (ps, byte, byte/s, flop/s)
};

constexpr std::array kTimeUnits{
    UnitScale{"ps", 1.0},        UnitScale{"ns", 1e3},    UnitScale{"us", 1e6},
    UnitScale{"\xC2\xB5s", 1e6}, UnitScale{"ms", 1e9},    UnitScale{"s", 1e12},
    UnitScale{"min", 60e12},     UnitScale{"h", 3600e12},
};

constexpr double kKi = 1024.0;
constexpr std::array kByteUnits{
    UnitScale{"B", 1.0},
    UnitScale{"kB", 1e3},
    UnitScale{"KB", 1e3},
    UnitScale{"MB", 1e6},
    UnitScale{"GB", 1e9},
    UnitScale{"TB", 1e12},
    UnitScale{"PB", 1e15},
    UnitScale{"KiB", kKi},
    UnitScale{"MiB", kKi* kKi},
    UnitScale{"GiB", kKi* kKi* kKi},
    UnitScale{"TiB", kKi* kKi* kKi* kKi},
    UnitScale{"PiB", kKi* kKi* kKi* kKi* kKi},
};

constexpr std::array kBandwidthUnits{
    UnitScale{"B/s", 1.0},
    UnitScale{"kB/s", 1e3},
    UnitScale{"KB/s", 1e3},
    UnitScale{"MB/s", 1e6},
    UnitScale{"GB/s", 1e9},
    UnitScale{"TB/s", 1e12},
    UnitScale{"KiB/s", kKi},
    UnitScale{"MiB/s", kKi* kKi},
    UnitScale{"GiB/s", kKi* kKi* kKi},
    UnitScale{"TiB/s", kKi* kKi* kKi* kKi},
    UnitScale{"bps", 0.125},
    UnitScale{"kbps", 1e3 / 8},
    UnitScale{"Kbps", 1e3 / 8},
    UnitScale{"Mbps", 1e6 / 8},
    UnitScale{"Gbps", 1e9 / 8},
    UnitScale{"Tbps", 1e12 / 8},
    UnitScale{"b/s", 0.125},
    UnitScale{"kb/s", 1e3 / 8},
    UnitScale{"Kb/s", 1e3 / 8},
    UnitScale{"Mb/s", 1e6 / 8},
    UnitScale{"Gb/s", 1e9 / 8},
    UnitScale{"Tb/s", 1e12 / 8},
    UnitScale{"Gbit/s", 1e9 / 8},
    UnitScale{"Mbit/s", 1e6 / 8},
    UnitScale{"Tbit/s", 1e12 / 8},
};

constexpr std::array kFlopUnits{
    UnitScale{"FLOPS", 1.0},    UnitScale{"kFLOPS", 1e3},   UnitScale{"KFLOPS", 1e3},
    UnitScale{"MFLOPS", 1e6},   UnitScale{"GFLOPS", 1e9},   UnitScale{"TFLOPS", 1e12},
    UnitScale{"PFLOPS", 1e15},  UnitScale{"FLOP/s", 1.0},   UnitScale{"GFLOP/s", 1e9},
    UnitScale{"TFLOP/s", 1e12}, UnitScale{"PFLOP/s", 1e15},
};

struct NumberAndUnit {
  double value;
  std::string_view unit;
};

NumberAndUnit split_number(std::string_view text, std::string_view what, std::string_view units) {
  std::string_view s = trim_whitespace(text);
  std::size_t i = 0;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) ++i;
  bool digits = false;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
    ++i;
    digits = true;
  }
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) {
      ++i;
      digits = true;
    }
  }
  if (digits && i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    std::size_t j = i + 1;
    if (j < s.size() && (s[j] == '+' || s[j] == '-')) ++j;
    std::size_t exp_start = j;
    while (j < s.size() && std::isdigit(static_cast<unsigned char>(s[j]))) ++j;
    if (j > exp_start)
      i = j;  // otherwise the 'e' belongs to the unit (there is none such, but be safe)
  }
  if (!digits) {
    throw QuantityError(fmt::format("'{}' is not a {}: expected a number followed by a unit ({})",
                                    text, what, units));
  }
  std::string number(s.substr(0, i));
  double value = 0.0;
  auto [ptr, ec] = std::from_chars(number.data(), number.data() + number.size(), value);
  if (ec != std::errc() || ptr != number.data() + number.size() || !std::isfinite(value)) {
    throw QuantityError(fmt::format("'{}' is not a {}: the number is out of range", text, what));
  }
  if (value < 0) {
    throw QuantityError(fmt::format("'{}' is not a valid {}: it must not be negative", text, what));
  }
  return {value, trim_whitespace(s.substr(i))};
}

template <std::size_t N>
double parse_scaled(std::string_view text, std::string_view what,
                    const std::array<UnitScale, N>& units, std::string_view units_help,
                    std::string_view example) {
  NumberAndUnit nu = split_number(text, what, units_help);
  if (nu.unit.empty()) {
    throw QuantityError(fmt::format("'{}' has no unit: a {} needs one of {} (e.g. {})",
                                    trim_whitespace(text), what, units_help, example));
  }
  for (const UnitScale& u : units) {
    if (u.suffix == nu.unit) return nu.value * u.scale;
  }
  throw QuantityError(fmt::format("'{}' has an unknown unit '{}' for a {}: use one of {}",
                                  trim_whitespace(text), nu.unit, what, units_help));
}

/// `limit` says the largest value in the user's units (a duration is 64-bit picoseconds, a size
/// 64-bit bytes).
std::int64_t to_int64(double v, std::string_view text, std::string_view what,
                      std::string_view limit) {
  double r = std::nearbyint(v);
  // 2^63 is exactly representable; anything at or above it does not fit.
  if (!(r < 9223372036854775808.0)) {
    throw QuantityError(fmt::format("'{}' is too large for a {} (allowed: up to {})",
                                    trim_whitespace(text), what, limit));
  }
  return static_cast<std::int64_t>(r);
}

}  // namespace

std::string_view time_units_help() { return "ps, ns, us, ms, s, min, h"; }
std::string_view bytes_units_help() {
  return "B, kB, MB, GB, TB, PB (powers of 1000) or KiB, MiB, GiB, TiB, PiB (powers of 1024)";
}
std::string_view bandwidth_units_help() {
  return "B/s, kB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s (bytes) or bps, Mbps, Gbps, Tbps (bits)";
}
std::string_view flop_rate_units_help() { return "FLOPS, GFLOPS, TFLOPS, PFLOPS"; }

Time parse_time(std::string_view text) {
  double ps = parse_scaled(text, "duration", kTimeUnits, time_units_help(), "1.5ms");
  if (ps > 0 && std::nearbyint(ps) == 0) {
    throw QuantityError(fmt::format(
        "'{}' is below one picosecond, the smallest duration bubblesim represents (use 0 or at "
        "least 1ps)",
        trim_whitespace(text)));
  }
  return Time::from_ps(
      to_int64(ps, text, "duration", "2562047h, about 106 days: durations are 64-bit picoseconds"));
}

Bytes parse_bytes(std::string_view text) {
  double b = parse_scaled(text, "size", kByteUnits, bytes_units_help(), "80GiB");
  return Bytes(to_int64(b, text, "size", "8EiB: sizes are 64-bit byte counts"));
}

Bandwidth parse_bandwidth(std::string_view text) {
  double v = parse_scaled(text, "bandwidth", kBandwidthUnits, bandwidth_units_help(), "25GB/s");
  if (v <= 0)
    throw QuantityError(
        fmt::format("'{}' is not a valid bandwidth: it must be positive", trim_whitespace(text)));
  if (v > 1e18)
    throw QuantityError(fmt::format("'{}' is too large for a bandwidth (allowed: up to 1EB/s)",
                                    trim_whitespace(text)));
  return Bandwidth::bytes_per_second(v);
}

FlopRate parse_flop_rate(std::string_view text) {
  double v = parse_scaled(text, "compute rate", kFlopUnits, flop_rate_units_help(), "989TFLOPS");
  if (v <= 0)
    throw QuantityError(fmt::format("'{}' is not a valid compute rate: it must be positive",
                                    trim_whitespace(text)));
  if (v > 1e24)
    throw QuantityError(
        fmt::format("'{}' is too large for a compute rate (allowed: up to 1e24 "
                    "FLOPS, a million PFLOPS)",
                    trim_whitespace(text)));
  return FlopRate::flops_per_second(v);
}

}  // namespace bubblesim
