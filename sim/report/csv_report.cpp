// The CSV report: one row per schedule with every scalar metric of the metric table.
#include <fmt/format.h>

#include "sim/report/metric_table.h"
#include "sim/report/text_report.h"
#include "sim/units/utf8.h"

namespace bubblesim {

std::string csv_quote(const std::string& raw) {
  // A user string's control characters (ESC, BEL, CR) as \xHH: a CR alone would end the record
  // for some readers, an escape sequence would drive the terminal the CSV is printed on.
  const std::string field = visible_controls(raw, true);
  if (field.find_first_of(",\"\n") == std::string::npos) return field;
  std::string q = "\"";
  for (char c : field) q += c == '"' ? std::string("\"\"") : std::string(1, c);
  return q + "\"";
}

namespace {

/// The metrics that are CSV columns: every scalar one, in table order.
std::vector<const Metric*> csv_metrics() {
  std::vector<const Metric*> out;
  for (const Metric& m : metric_table())
    if (m.shape == MetricShape::Scalar) out.push_back(&m);
  return out;
}

std::string csv_number(const Metric& m, double v) {
  if (m.unit == MetricUnit::Bytes || m.unit == MetricUnit::Count) return fmt::format("{:.0f}", v);
  return fmt::format("{:.17g}", v);
}

}  // namespace

std::string csv_report_header() {
  std::string out = "scenario,schedule,label,status";
  for (const Metric* m : csv_metrics()) out.append(",").append(m->csv_column());
  return out + "\n";
}

std::string csv_report_row(const Scenario& scenario, const ScheduleRun& r) {
  std::string out =
      fmt::format("{},{},{},{}", csv_quote(scenario.labels.name), csv_quote(r.schedule),
                  csv_quote(r.label), run_status_name(r.simulation.status));
  for (const Metric* m : csv_metrics()) {
    MetricValue v = metric_value(*m, scenario, r);
    out += ',';
    if (v.number) out += csv_number(*m, *v.number);
  }
  return out + "\n";
}

std::string csv_report_cells_without_run(std::string_view status) {
  return fmt::format(",,,{}{}", status, std::string(csv_metrics().size(), ','));
}

std::string csv_report_infeasible_row(const Scenario& scenario, const InfeasibleSchedule& s) {
  return fmt::format("{},{},{},infeasible{}\n", csv_quote(scenario.labels.name),
                     csv_quote(s.schedule), csv_quote(s.label),
                     std::string(csv_metrics().size(), ','));
}

std::string scenario_report_csv(const Scenario& scenario, const ScenarioRun& result) {
  std::string out = csv_report_header();
  for (const ScheduleRun& r : result.runs) out += csv_report_row(scenario, r);
  for (const InfeasibleSchedule& s : result.infeasible)
    out += csv_report_infeasible_row(scenario, s);
  return out;
}

}  // namespace bubblesim
