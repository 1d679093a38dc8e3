#include "sim/units/quantity_parser.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

using namespace bubblesim;

TEST_CASE("durations") {
  CHECK(parse_time("1.5ms").ps() == 1'500'000'000);
  CHECK(parse_time("250us").ps() == 250'000'000);
  CHECK(parse_time("18.522ms").ps() == 18'522'000'000);
  CHECK(parse_time("2s").ps() == 2'000'000'000'000);
  CHECK(parse_time("1min") == parse_time("60s"));
  CHECK(parse_time("0.601ms").ps() == 601'000'000);
  CHECK(parse_time(" 3ns ").ps() == 3000);
  CHECK(parse_time("1e3ps").ps() == 1000);
}

TEST_CASE("sizes: SI vs binary") {
  CHECK(parse_bytes("80GiB").count() == 80LL * 1024 * 1024 * 1024);
  CHECK(parse_bytes("80GB").count() == 80'000'000'000LL);
  CHECK(parse_bytes("32MiB").count() == 32LL * 1024 * 1024);
  CHECK(parse_bytes("1KiB").count() == 1024);
  CHECK(parse_bytes("1kB").count() == 1000);
  CHECK(parse_bytes("0.5GiB").count() == 512LL * 1024 * 1024);
}

TEST_CASE("bandwidth: bits vs bytes") {
  CHECK(parse_bandwidth("25GB/s").bytes_per_second() == doctest::Approx(25e9));
  CHECK(parse_bandwidth("400Gbps").bytes_per_second() == doctest::Approx(50e9));
  CHECK(parse_bandwidth("400Gbps") == parse_bandwidth("50GB/s"));
  CHECK(parse_bandwidth("8Gb/s").bytes_per_second() == doctest::Approx(1e9));
  CHECK(parse_bandwidth("1GiB/s").bytes_per_second() == doctest::Approx(1073741824.0));
}

TEST_CASE("compute rate") {
  CHECK(parse_flop_rate("989TFLOPS").flops_per_second() == doctest::Approx(989e12));
  CHECK(parse_flop_rate("1PFLOPS").flops_per_second() == doctest::Approx(1e15));
}

TEST_CASE("a number without a unit says which unit to add") {
  CHECK_THROWS_WITH_AS(
      parse_time("18.5"),
      "'18.5' has no unit: a duration needs one of ps, ns, us, ms, s, min, h (e.g. 1.5ms)",
      QuantityError);
  CHECK_THROWS_WITH_AS(
      parse_bytes("1024"),
      "'1024' has no unit: a size needs one of B, kB, MB, GB, TB, PB (powers of 1000) or "
      "KiB, MiB, GiB, TiB, PiB (powers of 1024) (e.g. 80GiB)",
      QuantityError);
}

TEST_CASE("unknown unit, negative, not a number, overflow") {
  CHECK_THROWS_WITH_AS(
      parse_time("3days"),
      "'3days' has an unknown unit 'days' for a duration: use one of ps, ns, us, ms, s, min, h",
      QuantityError);
  CHECK_THROWS_WITH_AS(parse_time("-1ms"),
                       "'-1ms' is not a valid duration: it must not be negative", QuantityError);
  CHECK_THROWS_AS(parse_time("fast"), QuantityError);
  CHECK_THROWS_AS(parse_bytes("1e30B"), QuantityError);
  CHECK_THROWS_AS(parse_time("1e10h"), QuantityError);
  CHECK_THROWS_AS(parse_bandwidth("0GB/s"), QuantityError);
  CHECK_THROWS_AS(parse_flop_rate("12GB/s"), QuantityError);
}

TEST_CASE("Time renders with the largest readable unit") {
  CHECK(to_string(parse_time("18.522ms")) == "18.522ms");
  CHECK(fmt::format("{}", parse_time("250us")) == "250us");
  CHECK(fmt::format("{}", parse_time("1.5ms")) == "1.5ms");
  CHECK(fmt::format("{}", Time::zero()).size() > 0);
  CHECK(to_string(parse_bytes("1GiB")) == "1GiB");
  CHECK(fmt::format("{}", parse_bytes("512MiB")) == "512MiB");
}

TEST_CASE("bytes render with the largest binary prefix, exact when whole") {
  CHECK(bubblesim::to_string(bubblesim::Bytes(1LL << 30)) == "1GiB");
  CHECK(bubblesim::to_string(bubblesim::Bytes(24064LL << 20)) == "23.5GiB");
  CHECK(bubblesim::to_string(bubblesim::Bytes(50'000'000)) == "47.68MiB");
  CHECK(bubblesim::to_string(bubblesim::Bytes(1000)) == "1000B");
  CHECK(bubblesim::to_string(bubblesim::Bytes(-(3LL << 20))) == "-3MiB");
}
