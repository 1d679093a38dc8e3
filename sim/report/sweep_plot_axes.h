#pragma once
// Numbers and axes of the sweep plot (sweep_plot.h): the records of a sweep CSV, numbers in it,
// "nice" tick steps and their labels, and the x axis made from the first sweep axis.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace bubblesim::sweep_plot_axes {

/// Records of a CSV text with RFC 4180 quoting (a quoted field may hold commas, "" and
/// newlines). Throws InputError naming `file` for an unclosed quote.
std::vector<std::vector<std::string>> parse_csv(std::string_view text, const std::string& file);

/// A finite number written in full, else nullopt.
std::optional<double> parse_number(std::string_view s);

/// `v` with `decimals` decimals; "-0" never appears.
std::string fixed(double v, int decimals);

/// A step of 1, 2 or 5 times a power of ten giving about `target` ticks over `span`.
double nice_step(double span, double target);

/// The label of tick `v` for ticks `step` apart.
std::string tick_label(double v, double step);

/// Ticks at multiples of `step` within [lo, hi].
std::vector<double> ticks(double lo, double hi, double step);

/// The x axis: the first sweep axis' labels, as numbers in one display unit when they all parse
/// as plain numbers, byte counts or times, else categories.
struct XAxis {
  std::vector<std::string> labels;
  std::vector<double> values;  // display units; empty for categories
  std::string unit;            // "GiB", "ms", "" (plain numbers)
};

XAxis make_x_axis(std::vector<std::string> labels);

}  // namespace bubblesim::sweep_plot_axes
