#pragma once
// Bytes: an amount of memory or data as an integer count of bytes.

#include <fmt/format.h>

#include <compare>
#include <cstdint>
#include <string>

#include "sim/units/overflow_error.h"

namespace bubblesim {

class Bytes {
 public:
  constexpr Bytes() = default;
  constexpr explicit Bytes(std::int64_t count) : count_(count) {}
  static constexpr Bytes zero() { return Bytes(0); }

  constexpr std::int64_t count() const { return count_; }
  constexpr double as_double() const { return static_cast<double>(count_); }

  friend constexpr auto operator<=>(Bytes, Bytes) = default;

  Bytes& operator+=(Bytes other) {
    if (__builtin_add_overflow(count_, other.count_, &count_))
      throw OverflowError("byte count overflows");
    return *this;
  }
  Bytes& operator-=(Bytes other) {
    if (__builtin_sub_overflow(count_, other.count_, &count_))
      throw OverflowError("byte count overflows");
    return *this;
  }
  friend Bytes operator+(Bytes a, Bytes b) { return a += b; }
  friend Bytes operator-(Bytes a, Bytes b) { return a -= b; }
  friend Bytes operator*(Bytes a, std::int64_t k) {
    std::int64_t r = 0;
    if (__builtin_mul_overflow(a.count_, k, &r)) throw OverflowError("byte count overflows");
    return Bytes(r);
  }
  friend Bytes operator*(std::int64_t k, Bytes a) { return a * k; }
  friend constexpr Bytes operator/(Bytes a, std::int64_t k) { return Bytes(a.count_ / k); }
  friend constexpr double operator/(Bytes a, Bytes b) { return a.as_double() / b.as_double(); }

 private:
  std::int64_t count_ = 0;
};

/// Rendering with the largest binary prefix that fits: exact when it divides evenly ("1GiB"),
/// else rounded to two decimals ("23.5GiB"); below 1KiB in bytes ("123B"). Reports that need
/// exact values print byte counts.
std::string to_string(Bytes b);

}  // namespace bubblesim

template <>
struct fmt::formatter<bubblesim::Bytes> : fmt::formatter<std::string> {
  auto format(bubblesim::Bytes b, format_context& ctx) const {
    return fmt::formatter<std::string>::format(bubblesim::to_string(b), ctx);
  }
};
