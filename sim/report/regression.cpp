#include "sim/report/regression.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>

#include "sim/report/json_report.h"
#include "sim/report/metric_format.h"
#include "sim/units/diagnostics.h"
#include "sim/units/text_file.h"

namespace bubblesim {
namespace {

constexpr double kAbsoluteSlack = 1e-12;
/// Every scalar metric of the metric table present in one result, by name ("level.key"), in a
/// stable (sorted) order. Per-device lists are judged through their scalar summaries
/// (peak_memory_bytes is the largest of peak_memory_bytes_per_device), so nothing counts twice;
/// keys the table does not know (a newer report) are left out.
std::map<std::string, std::pair<const Metric*, double>> metrics_of(const nlohmann::json& result) {
  std::map<std::string, std::pair<const Metric*, double>> out;
  for (const Metric& m : metric_table()) {
    if (m.shape != MetricShape::Scalar) continue;
    const std::string level(metric_level_name(m.level)), key(m.key);
    if (!result.contains(level) || !result[level].is_object()) continue;
    const nlohmann::json& object = result[level];
    if (object.contains(key) && object[key].is_number())
      out[m.name()] = {&m, object[key].get<double>()};
  }
  return out;
}

void check_report(const nlohmann::json& j, const std::string& name) {
  if (!j.is_object() || !j.contains("schema_version") || !j.contains("results") ||
      !j["results"].is_array()) {
    throw InputError(fmt::format(
        "{}: not a bubblesim JSON report (expected schema_version and results; write one "
        "with `bubblesim run SCENARIO --format json`)",
        name));
  }
  // Version 2 only moved the ranking; the results (all regress reads) are laid out as in 1.
  if (!j["schema_version"].is_number_integer() || j["schema_version"].get<int>() < 1 ||
      j["schema_version"].get<int>() > kReportSchemaVersion) {
    throw InputError(
        fmt::format("{}: unknown report schema_version {} (this bubblesim reads versions 1 to {})",
                    name, j["schema_version"].dump(), kReportSchemaVersion));
  }
  // What regress reads must have its type: a metric that is not a number (null is a missing
  // value, e.g. an out-of-memory run's iteration time) would otherwise be skipped silently.
  const auto refuse = [&](std::size_t i, const std::string& where, const char* expected,
                          const nlohmann::json& got) {
    std::string shown = got.dump();
    if (shown.size() > 60) shown = shown.substr(0, 60) + "...";
    throw InputError(
        fmt::format("{}: results[{}]{}: expected {}, got {}", name, i, where, expected, shown));
  };
  const nlohmann::json& results = j["results"];
  for (std::size_t i = 0; i < results.size(); ++i) {
    const nlohmann::json& r = results[i];
    if (!r.is_object()) refuse(i, "", "an object (one schedule's result)", r);
    for (const char* text_key : {"label", "status"}) {
      if (r.contains(text_key) && !r[text_key].is_string())
        refuse(i, std::string(".") + text_key, "a string", r[text_key]);
    }
    for (const Metric& m : metric_table()) {
      const std::string level(metric_level_name(m.level)), key(m.key);
      if (!r.contains(level)) continue;
      if (!r[level].is_object()) refuse(i, "." + level, "an object", r[level]);
      if (m.shape != MetricShape::Scalar || !r[level].contains(key)) continue;
      const nlohmann::json& v = r[level][key];
      if (!v.is_number() && !v.is_null()) refuse(i, "." + level + "." + key, "a number or null", v);
    }
  }
}

std::string scenario_name(const nlohmann::json& report) {
  if (report.contains("scenario") && report["scenario"].is_object() &&
      report["scenario"].contains("name") && report["scenario"]["name"].is_string()) {
    return report["scenario"]["name"].get<std::string>();
  }
  return "scenario";
}

std::string six_digits(double v) { return fmt::format("{:.6g}", v); }

/// The standard error of a Monte Carlo estimate in one result (0 when it has no samples).
double standard_error(const nlohmann::json& result, const Metric& metric) {
  std::optional<SamplingError> e = sampling_error_of(metric);
  if (!e || e->sd == nullptr || !result.contains("simulation")) return 0.0;
  const nlohmann::json& sim = result["simulation"];
  const std::string sd_key(e->sd->key), n_key(samples_metric().key);
  if (!sim.is_object() || !sim.contains(sd_key) || !sim[sd_key].is_number() ||
      !sim.contains(n_key) || !sim[n_key].is_number())
    return 0.0;
  const double n = sim[n_key].get<double>();
  return n > 0 ? e->factor * sim[sd_key].get<double>() / std::sqrt(n) : 0.0;
}

/// The GPU peaks a report's MFU is against: the dense and FP8 peaks and whether the linear GEMMs
/// ran in FP8 ("" without a GPU).
std::string peaks_of(const nlohmann::json& report) {
  const nlohmann::json* sc =
      report.contains("scenario") && report["scenario"].is_object() ? &report["scenario"] : nullptr;
  if (sc == nullptr || !sc->contains("cluster")) return "";
  const nlohmann::json gpu = (*sc)["cluster"].value("gpu", nlohmann::json::object());
  const nlohmann::json model = sc->value("model", nlohmann::json::object());
  return gpu.value("flops", nlohmann::json()).dump() + "/" +
         gpu.value("flops_fp8", nlohmann::json()).dump() + "/" +
         model.value("fp8_linear", nlohmann::json()).dump();
}

/// Which Monte Carlo samples a report drew: its variability's seed and sample count ("" without).
std::string samples_drawn(const nlohmann::json& report) {
  if (!report.contains("scenario") || !report["scenario"].is_object() ||
      !report["scenario"].contains("variability"))
    return "";
  const nlohmann::json& v = report["scenario"]["variability"];
  return v.value("seed", nlohmann::json()).dump() + "/" +
         v.value("samples", nlohmann::json()).dump();
}

/// The dotted keys under which `a` and `b` differ: objects are walked, anything else (lists of
/// per-stage values included) is compared whole under its key.
void differing_keys(const nlohmann::json& a, const nlohmann::json& b, const std::string& path,
                    std::vector<std::string>& out) {
  if (a.is_object() && b.is_object()) {
    std::map<std::string, bool> keys;
    for (const auto& [k, v] : a.items()) keys[k] = true;
    for (const auto& [k, v] : b.items()) keys[k] = true;
    for (const auto& [k, present] : keys) {
      const std::string sub = path.empty() ? k : path + "." + k;
      if (!a.contains(k) || !b.contains(k)) {
        out.push_back(sub);
        continue;
      }
      differing_keys(a[k], b[k], sub, out);
    }
    return;
  }
  if (a != b) out.push_back(path.empty() ? "scenario" : path);
}

/// The metrics judged by default for one baseline result: the verdict's ranking metric (the
/// iteration time where the result has one, else the makespan) and the peak memory.
bool headline(const Metric& m, const nlohmann::json& baseline_result) {
  if (m.level != MetricLevel::Simulation) return false;
  if (m.key == "peak_memory_bytes") return true;
  const nlohmann::json* sim =
      baseline_result.contains("simulation") && baseline_result["simulation"].is_object()
          ? &baseline_result["simulation"]
          : nullptr;
  const bool iteration =
      sim != nullptr && sim->contains("iteration_time_s") && (*sim)["iteration_time_s"].is_number();
  return m.key == (iteration ? "iteration_time_s" : "makespan_s");
}

}  // namespace

bool RegressionReport::changed() const {
  return regressed() || !scenario_differences.empty() ||
         std::any_of(metrics.begin(), metrics.end(),
                     [](const MetricComparison& m) { return m.improvement; });
}

FailOn parse_fail_on(const std::string& text) {
  if (text == "regression") return FailOn::Regression;
  if (text == "any") return FailOn::Any;
  if (text == "none") return FailOn::None;
  throw InputError(fmt::format(
      "--fail-on: '{}' is not allowed (allowed: regression, the default: exit 1 on a "
      "regression; any: also on an improvement beyond the tolerance or differing scenarios; "
      "none: always exit 0)",
      text));
}

bool fails(const RegressionReport& report, FailOn fail_on) {
  switch (fail_on) {
    case FailOn::Regression:
      return report.regressed();
    case FailOn::Any:
      return report.changed();
    case FailOn::None:
      return false;
  }
  return report.regressed();
}

bool RegressionReport::regressed() const {
  return !status_changes.empty() || !lost.empty() || !missing.empty() ||
         std::any_of(metrics.begin(), metrics.end(),
                     [](const MetricComparison& m) { return m.regression; });
}

double parse_tolerance(const std::string& text) {
  std::string t = text;
  t.erase(std::remove(t.begin(), t.end(), ' '), t.end());
  bool percent = !t.empty() && t.back() == '%';
  if (percent) t.pop_back();
  double v = 0.0;
  std::size_t used = 0;
  try {
    v = std::stod(t, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (t.empty() || used != t.size() || !std::isfinite(v) || v < 0) {
    throw InputError(fmt::format(
        "--tolerance: '{}' is not a tolerance (give a percentage like 1% or a fraction like "
        "0.01, not negative)",
        text));
  }
  return percent ? v / 100.0 : v;
}

std::vector<std::string> parse_metric_names(const std::string& text) {
  std::vector<std::string> names;
  std::size_t from = 0;
  while (from <= text.size()) {
    std::size_t comma = text.find(',', from);
    if (comma == std::string::npos) comma = text.size();
    std::string name = text.substr(from, comma - from);
    name.erase(0, name.find_first_not_of(' '));
    name.erase(name.find_last_not_of(' ') + 1);
    from = comma + 1;
    if (name.empty()) continue;
    bool known = false;
    for (const Metric& m : metric_table()) {
      if (m.shape == MetricShape::Scalar && (m.name() == name || m.key == name)) known = true;
    }
    if (!known) {
      std::vector<std::string> all;
      for (const Metric& m : metric_table())
        if (m.shape == MetricShape::Scalar) all.push_back(m.name());
      throw InputError(fmt::format(
          "--only: '{}' is not a metric (give LEVEL.KEY or KEY, comma-separated; known: {})", name,
          fmt::join(all, ", ")));
    }
    names.push_back(name);
  }
  if (names.empty()) throw InputError("--only: name at least one metric");
  return names;
}

RegressionReport compare_reports(const nlohmann::json& baseline, const nlohmann::json& current,
                                 double tolerance, const std::string& baseline_name,
                                 const std::string& current_name,
                                 const std::vector<std::string>& only, bool all) {
  auto wanted = [&](const Metric& m) {
    if (only.empty()) return true;
    return std::any_of(only.begin(), only.end(),
                       [&](const std::string& n) { return n == m.name() || n == m.key; });
  };
  check_report(baseline, baseline_name);
  check_report(current, current_name);
  RegressionReport out;
  out.tolerance = tolerance;
  if (baseline.contains("scenario") && current.contains("scenario"))
    differing_keys(baseline["scenario"], current["scenario"], "", out.scenario_differences);
  std::map<std::string, const nlohmann::json*> now;
  for (const auto& r : current["results"]) now[r.value("label", "")] = &r;
  std::map<std::string, bool> seen;
  const bool same_samples = samples_drawn(baseline) == samples_drawn(current);
  const bool same_peaks = peaks_of(baseline) == peaks_of(current);
  for (const auto& b : baseline["results"]) {
    const std::string label = b.value("label", "");
    seen[label] = true;
    auto it = now.find(label);
    if (it == now.end()) {
      out.missing.push_back(label);
      continue;
    }
    const nlohmann::json& c = *it->second;
    const std::string bs = b.value("status", "ok"), cs = c.value("status", "ok");
    if (bs == "ok" && cs != "ok")
      out.status_changes.push_back(fmt::format("{}: {} -> {}", label, bs, cs));
    auto bm = metrics_of(b), cm = metrics_of(c);
    for (const auto& [name, metric_and_value] : bm) {
      const auto& [metric, bv] = metric_and_value;
      auto cv = cm.find(name);
      if (!wanted(*metric)) continue;
      // Without `all` or `only`, the metrics beside the headline ones are counted, not judged.
      const bool judged = all || !only.empty() || headline(*metric, b);
      if (!judged) {
        if (cv != cm.end() && cv->second.second != bv) ++out.unjudged_changes;
        continue;
      }
      if (cv == cm.end()) {
        // A value the baseline has and a still-ok current lacks (null or absent) is lost, not
        // unchanged (a failed status is reported above instead).
        if (bs == "ok" && cs == "ok")
          out.lost.push_back(fmt::format("{}: {} {} -> no value", label, name, six_digits(bv)));
        continue;
      }
      MetricComparison m{label, name, metric, bv, cv->second.second, false, false};
      m.sampling_error = std::hypot(standard_error(b, *metric), standard_error(c, *metric));
      const double margin = kAbsoluteSlack + kSamplingSigmas * m.sampling_error;
      const bool higher = m.current > m.baseline * (1.0 + tolerance) + margin;
      const bool lower = m.current < m.baseline * (1.0 - tolerance) - margin;
      m.other_samples =
          !same_samples && metric->level == MetricLevel::Simulation && !sampling_error_of(*metric);
      m.other_peak = !same_peaks && metric->key == "mfu";
      switch (m.other_samples || m.other_peak ? MetricDirection::Informational
                                              : metric->direction) {
        case MetricDirection::LowerIsBetter:
          m.regression = higher;
          m.improvement = lower;
          break;
        case MetricDirection::HigherIsBetter:
          m.regression = lower;
          m.improvement = higher;
          break;
        case MetricDirection::Informational:
          break;
      }
      out.metrics.push_back(m);
    }
  }
  for (const auto& [label, r] : now) {
    if (!seen.count(label)) out.added.push_back(label);
  }
  return out;
}

nlohmann::json benchmark_entries(const nlohmann::json& report) {
  check_report(report, "report");
  nlohmann::json out = nlohmann::json::array();
  const std::string scenario = scenario_name(report);
  for (const auto& r : report["results"]) {
    for (const auto& [name, metric_and_value] : metrics_of(r)) {
      const auto& [metric, value] = metric_and_value;
      if (metric->direction != MetricDirection::LowerIsBetter) continue;
      out.push_back({{"name", fmt::format("{}/{}/{}", scenario, r.value("label", ""), name)},
                     {"unit", metric_unit_name(metric->unit)},
                     {"value", value}});
    }
  }
  return out;
}

nlohmann::json read_json_file(const std::string& path) {
  // A regular file read with the input bound; remembered, so an output onto it is refused.
  const std::string text = read_text_file(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::exception& e) {
    // parse_error, and out_of_range for a number beyond a double (1e999999).
    throw InputError(fmt::format("{}: not valid JSON: {}", path, e.what()));
  }
}

}  // namespace bubblesim
