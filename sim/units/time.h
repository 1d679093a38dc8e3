#pragma once
// Time: a duration or an instant as an integer count of picoseconds.
//
// Integer time keeps event ordering exact and reports byte-identical. Arithmetic that would leave
// the int64 range throws OverflowError instead of wrapping (about 106 days fit).

#include <fmt/format.h>

#include <compare>
#include <cstdint>
#include <limits>
#include <string>

#include "sim/units/overflow_error.h"

namespace bubblesim {

class Time {
 public:
  constexpr Time() = default;
  static constexpr Time from_ps(std::int64_t ps) { return Time(ps); }
  /// Rounds to the nearest picosecond; throws OverflowError when out of range or not finite.
  static Time from_seconds(double seconds);
  static constexpr Time zero() { return Time(0); }
  static constexpr Time max() { return Time(std::numeric_limits<std::int64_t>::max()); }

  constexpr std::int64_t ps() const { return ps_; }
  constexpr double seconds() const { return static_cast<double>(ps_) * 1e-12; }
  constexpr double milliseconds() const { return static_cast<double>(ps_) * 1e-9; }
  constexpr double microseconds() const { return static_cast<double>(ps_) * 1e-6; }

  friend constexpr auto operator<=>(Time, Time) = default;

  Time& operator+=(Time other) {
    if (__builtin_add_overflow(ps_, other.ps_, &ps_))
      throw OverflowError("time addition overflows");
    return *this;
  }
  Time& operator-=(Time other) {
    if (__builtin_sub_overflow(ps_, other.ps_, &ps_))
      throw OverflowError("time subtraction overflows");
    return *this;
  }
  friend Time operator+(Time a, Time b) { return a += b; }
  friend Time operator-(Time a, Time b) { return a -= b; }
  friend Time operator*(Time a, std::int64_t k) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a.ps_, k, &r)) throw OverflowError("time multiplication overflows");
    return Time(r);
  }
  friend Time operator*(std::int64_t k, Time a) { return a * k; }
  /// Integer division (truncates toward zero), e.g. to split a stage's cost among its chunks.
  friend constexpr Time operator/(Time a, std::int64_t k) { return Time(a.ps_ / k); }
  friend constexpr double operator/(Time a, Time b) {
    return static_cast<double>(a.ps_) / static_cast<double>(b.ps_);
  }

 private:
  constexpr explicit Time(std::int64_t ps) : ps_(ps) {}
  std::int64_t ps_ = 0;
};

/// Shortest exact decimal rendering with the largest unit that keeps it readable: "18.522ms".
std::string to_string(Time t);

}  // namespace bubblesim

template <>
struct fmt::formatter<bubblesim::Time> : fmt::formatter<std::string> {
  auto format(bubblesim::Time t, format_context& ctx) const {
    return fmt::formatter<std::string>::format(bubblesim::to_string(t), ctx);
  }
};
