#include "schedules/variability_settings.h"

#include <algorithm>

namespace bubblesim {

double VariabilitySpec::cv_of(JitterKind kind, std::int32_t stage) const {
  const auto k = static_cast<std::size_t>(kind);
  const bool measured =
      kind == JitterKind::Forward || kind == JitterKind::Backward || kind == JitterKind::Weight;
  if (measured && stage >= 0 && static_cast<std::size_t>(stage) < stage_cv.size())
    return stage_cv[static_cast<std::size_t>(stage)][k];
  return cv[k];
}

bool VariabilitySpec::noiseless() const {
  auto zero = [](const CvByKind& c) {
    return std::all_of(c.begin(), c.end(), [](double x) { return x == 0.0; });
  };
  if (!stage_cv.empty()) {
    // Measured F, B, W per stage; copies and transfers from cv.
    for (const CvByKind& c : stage_cv) {
      for (JitterKind k : {JitterKind::Forward, JitterKind::Backward, JitterKind::Weight})
        if (c[static_cast<std::size_t>(k)] != 0.0) return false;
    }
    return cv[static_cast<std::size_t>(JitterKind::Copy)] == 0.0 &&
           cv[static_cast<std::size_t>(JitterKind::Transfer)] == 0.0;
  }
  return zero(cv);
}

std::string_view jitter_distribution_name(JitterDistribution d) {
  switch (d) {
    case JitterDistribution::Normal:
      return "normal";
    case JitterDistribution::Lognormal:
      return "lognormal";
    case JitterDistribution::Gamma:
      return "gamma";
  }
  return "?";
}

std::string_view jitter_unit_name(JitterUnit u) {
  switch (u) {
    case JitterUnit::Op:
      return "op";
    case JitterUnit::OpKind:
      return "op-kind";
    case JitterUnit::Device:
      return "device";
  }
  return "?";
}

std::string_view jitter_kind_key(JitterKind k) {
  switch (k) {
    case JitterKind::Forward:
      return "F";
    case JitterKind::Backward:
      return "B";
    case JitterKind::Weight:
      return "W";
    case JitterKind::Copy:
      return "copies";
    case JitterKind::Transfer:
      return "transfers";
  }
  return "?";
}

std::optional<JitterDistribution> jitter_distribution_from_name(std::string_view name) {
  for (JitterDistribution d :
       {JitterDistribution::Normal, JitterDistribution::Lognormal, JitterDistribution::Gamma})
    if (jitter_distribution_name(d) == name) return d;
  return std::nullopt;
}

std::optional<JitterUnit> jitter_unit_from_name(std::string_view name) {
  for (JitterUnit u : {JitterUnit::Op, JitterUnit::OpKind, JitterUnit::Device})
    if (jitter_unit_name(u) == name) return u;
  return std::nullopt;
}

}  // namespace bubblesim
