#pragma once
// How the reports write numbers and the scenario's communication: one place, so the text,
// Markdown, HTML and explain reports print the same value the same way.

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "sim/scenario/scenario.h"

namespace bubblesim::report_format {

/// A bubble ratio: 4 decimals.
inline std::string ratio(double r) { return fmt::format("{:.4f}", r); }
/// A ratio or "-" when there is none.
inline std::string opt_ratio(const std::optional<double>& r) { return r ? ratio(*r) : "-"; }
/// Milliseconds with 3 decimals.
inline std::string ms(Time t) { return fmt::format("{:.3f}", t.milliseconds()); }
/// Activation units: 2 decimals.
inline std::string units(double u) { return fmt::format("{:.2f}", u); }
/// A number, or null when there is none (JSON).
inline nlohmann::json optional_number(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

/// "fixed-delay 601us" or "topology (V vertices, L links)".
inline std::string communication_summary(const Scenario& s) {
  if (s.communication.kind == CommunicationKind::FixedDelay) {
    return fmt::format("fixed-delay {}", s.communication.delay);
  }
  return fmt::format("topology ({} vertices, {} links)", s.communication.topology->vertex_count(),
                     s.communication.topology->link_count() / 2);
}

}  // namespace bubblesim::report_format
