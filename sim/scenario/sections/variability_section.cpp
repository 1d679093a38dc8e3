#include "sim/scenario/sections/variability_section.h"

#include <fmt/format.h>

#include <array>
#include <limits>
#include <string>

#include "sim/scenario/scenario.h"

namespace bubblesim {
namespace {

constexpr std::array<JitterKind, kJitterKinds> kKinds = {JitterKind::Forward, JitterKind::Backward,
                                                         JitterKind::Weight, JitterKind::Copy,
                                                         JitterKind::Transfer};

// `cv`: one fraction for every kind, or a map of kinds. Returns whether it was read.
bool read_cv(const YamlNode& node, const Scenario& sc, DiagnosticList& diags, CvByKind& cv) {
  if (!node.is_map()) {
    std::optional<double> all = node.as_real(diags, 0.0, 1.0);
    if (!all) return false;
    cv.fill(*all);
    return true;
  }
  std::vector<std::string> keys;
  for (JitterKind k : kKinds) keys.emplace_back(jitter_kind_key(k));
  MapReader r(node, diags, keys);
  bool ok = true;
  for (JitterKind k : kKinds) {
    const std::string key(jitter_kind_key(k));
    if (!r.has(key)) continue;
    std::optional<double> v = r.real(key, 0.0, 1.0);
    if (!v) {
      ok = false;
      continue;
    }
    cv[static_cast<std::size_t>(k)] = *v;
    if (*v == 0.0) continue;
    // A cv that could not change anything is refused (no key without an effect).
    if (k == JitterKind::Transfer && sc.communication.kind == CommunicationKind::FixedDelay &&
        sc.communication.delay == Time::zero()) {
      r.get(key)->error(diags,
                        "a transfer cv stretches the network delay (or route latency), and "
                        "communication.delay is 0: give a delay or a topology, or drop it");
      ok = false;
    }
    if (k == JitterKind::Copy && sc.memory.offload.policy == MemoryPolicy::None) {
      r.get(key)->error(diags,
                        "a copies cv stretches offload and reload copies, and the scenario has "
                        "none: set memory.offload, or drop it");
      ok = false;
    }
  }
  return ok;
}

}  // namespace

void read_variability_section(LoadContext& context, Scenario& sc) {
  std::optional<YamlNode> node = context.section("variability");
  if (!node) return;
  DiagnosticList& diags = context.diags();
  MapReader v(*node, diags,
              {"cv", "distribution", "per", "slowest_of", "correlation", "samples", "seed"});
  if (!node->is_map()) return;
  VariabilitySpec spec;
  bool ok = true;
  if (std::optional<YamlNode> cv = v.get("cv")) {
    ok = read_cv(*cv, sc, diags, spec.cv) && ok;
  } else if (!sc.costs.measured_cv.empty()) {
    spec.stage_cv = sc.costs.measured_cv;  // the profile's F, B and W cvs
    for (std::size_t s = 0; s < spec.stage_cv.size(); ++s) {
      for (double measured : spec.stage_cv[s]) {
        if (measured > 1.0) {
          node->error(diags, fmt::format("the profile's cv on stage {} is {}, above the 1 a "
                                         "variability allows; give variability.cv instead",
                                         s, measured));
          ok = false;
          break;
        }
      }
    }
  } else {
    node->error(diags,
                "variability needs a 'cv' (e.g. cv: 0.05, or per kind {F, B, W, copies, "
                "transfers}), or costs.profile with a cv column");
    ok = false;
  }
  std::vector<std::string> distributions, units;
  for (JitterDistribution d :
       {JitterDistribution::Normal, JitterDistribution::Lognormal, JitterDistribution::Gamma})
    distributions.emplace_back(jitter_distribution_name(d));
  for (JitterUnit u : {JitterUnit::Op, JitterUnit::OpKind, JitterUnit::Device})
    units.emplace_back(jitter_unit_name(u));
  if (v.has("distribution")) {
    std::optional<std::string> d = v.choice("distribution", distributions);
    if (d)
      spec.distribution = *jitter_distribution_from_name(*d);
    else
      ok = false;
  }
  if (v.has("per")) {
    std::optional<std::string> u = v.choice("per", units);
    if (u)
      spec.per = *jitter_unit_from_name(*u);
    else
      ok = false;
  }
  if (v.has("slowest_of")) {
    // `group`: a simulated device stands for its TP, CP and data-parallel ranks and runs at
    // the pace of the slowest of them (docs/variability.md).
    std::optional<std::string> g = v.choice("slowest_of", {"device", "group"});
    const std::int64_t gpus = sc.parallelism.world(1);  // one stage's tp x dp x cp GPUs
    if (!g) {
      ok = false;
    } else if (*g == "group" && spec.per != JitterUnit::Device) {
      v.get("slowest_of")
          ->error(diags, fmt::format("'group' needs per: device (per is '{}'): the "
                                     "group's GPUs differ as whole devices, not op by op",
                                     jitter_unit_name(spec.per)));
      ok = false;
    } else if (*g == "group" && gpus <= 1) {
      v.get("slowest_of")
          ->error(diags,
                  "'group' has no effect without tensor or data parallelism (each "
                  "device stands for one GPU): give parallelism.tp or parallelism.dp above 1");
      ok = false;
    } else if (*g == "group" && gpus > std::numeric_limits<std::int32_t>::max()) {
      v.get("slowest_of")
          ->error(diags, fmt::format("'group' draws one normal per GPU a device stands for: {} "
                                     "(tp x dp x cp) is more than 2^31 - 1",
                                     gpus));
      ok = false;
    } else if (*g == "group") {
      spec.gpus_per_device = static_cast<std::int32_t>(gpus);
    }
  }
  if (std::optional<YamlNode> corr = v.get("correlation")) {
    MapReader c(*corr, diags, {"within_device", "across_devices"});
    if (c.has("within_device")) {
      if (std::optional<double> w = c.real("within_device", 0.0, 1.0)) {
        spec.within_device = *w;
        if (spec.per == JitterUnit::Device) {
          c.get("within_device")
              ->error(diags,
                      "with per: device every op of a device shares one draw, so within_device "
                      "has no effect: drop it, or use per: op or op-kind");
          ok = false;
        }
      } else {
        ok = false;
      }
    }
    if (c.has("across_devices")) {
      if (std::optional<double> a = c.real("across_devices", 0.0, 1.0))
        spec.across_devices = *a;
      else
        ok = false;
    }
    if (ok && spec.per != JitterUnit::Device && spec.across_devices > spec.within_device) {
      corr->error(diags, fmt::format("across_devices ({}) must not exceed within_device ({}): ops "
                                     "of one device share every factor two devices share",
                                     spec.across_devices, spec.within_device));
      ok = false;
    }
  }
  if (v.has("samples")) {
    if (std::optional<std::int64_t> n = v.integer("samples", 1, 10'000'000))
      spec.samples = *n;
    else
      ok = false;
  }
  if (v.has("seed")) {
    if (std::optional<std::int64_t> s = v.integer("seed", 0, INT64_MAX))
      spec.seed = static_cast<std::uint64_t>(*s);
    else
      ok = false;
  }
  if (ok) sc.variability = std::move(spec);
}

}  // namespace bubblesim
