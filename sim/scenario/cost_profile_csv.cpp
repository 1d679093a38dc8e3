#include "sim/scenario/cost_profile_csv.h"

#include <fmt/format.h>

#include <charconv>
#include <map>
#include <optional>

#include "sim/units/csv_records.h"
#include "sim/units/diagnostics.h"
#include "sim/units/quantity_parser.h"

namespace bubblesim {
namespace {

constexpr std::string_view kHeader = "op,stage,duration,bytes";
constexpr std::string_view kHeaderWithCv = "op,stage,duration,bytes,cv";

struct OpField {
  std::string_view name;
  Time StageCost::*time = nullptr;
  Bytes StageCost::*bytes = nullptr;
};

constexpr OpField kOps[] = {
    {"forward", &StageCost::forward, nullptr},
    {"backward_input", &StageCost::backward_input, nullptr},
    {"backward_weight", &StageCost::backward_weight, nullptr},
    {"recompute", &StageCost::recompute, nullptr},
    {"fused_forward_backward", &StageCost::fused, nullptr},
    {"activation", nullptr, &StageCost::activation},
    {"weight_grad", nullptr, &StageCost::weight_grad},
    {"stage_input", nullptr, &StageCost::stage_input},
    {"p2p", nullptr, &StageCost::p2p},
    {"static", nullptr, &StageCost::static_memory},
};

std::string_view trim(std::string_view s);

// A coefficient of variation: a plain number in [0, 10] (a scenario's variability takes at most 1).
std::optional<double> parse_cv(std::string_view text) {
  double v = 0.0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || ec != std::errc() || p != text.data() + text.size() || !(v >= 0.0) ||
      !(v <= 10.0))
    return std::nullopt;
  return v;
}

std::string_view trim(std::string_view s) {
  std::size_t b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

}  // namespace

MeasuredProfile read_cost_profile_csv(std::string_view text, const std::string& file, int stages) {
  DiagnosticList diags;
  MeasuredProfile out;
  out.stages.assign(static_cast<std::size_t>(std::max(stages, 0)), StageCost{});
  std::map<std::string, std::map<int, int>> seen;  // op -> stage -> line
  bool header = false;
  bool has_cv = false;
  CsvReader reader(text, CsvComments::Hash);
  while (const std::optional<CsvRecord> record = reader.next()) {
    const int line_no = record->line;
    const std::string_view line = record->text();
    if (record->comment || trim(line).empty()) continue;
    auto at = [&](int col) { return SourceLocation{file, line_no, col}; };
    if (!header) {
      std::string compact;
      for (char c : line)
        if (c != ' ' && c != '\t') compact += c;
      if (compact != kHeader && compact != kHeaderWithCv) {
        diags.add(at(1), "",
                  fmt::format("expected the header line '{}' or '{}', got '{}'", kHeader,
                              kHeaderWithCv, line));
        break;
      }
      header = true;
      has_cv = compact == kHeaderWithCv;
      continue;
    }
    const std::vector<CsvField>& f = record->fields;
    const std::size_t columns = has_cv ? 5 : 4;
    if (f.size() != columns) {
      diags.add(at(1), "",
                fmt::format("expected {} columns ({}), got {}", columns,
                            has_cv ? kHeaderWithCv : kHeader, f.size()));
      continue;
    }
    std::string_view op = trim(f[0].value);
    const OpField* field = nullptr;
    for (const OpField& o : kOps)
      if (o.name == op) field = &o;
    if (field == nullptr) {
      std::vector<std::string> names;
      for (const OpField& o : kOps) names.emplace_back(o.name);
      std::string hint = closest_match(std::string(op), names);
      diags.add(at(f[0].column), "",
                fmt::format("unknown op '{}'{} (allowed: {})", op,
                            hint.empty() ? "" : fmt::format("; did you mean '{}'?", hint),
                            fmt::join(names, ", ")));
      continue;
    }
    std::string_view stage_text = trim(f[1].value);
    int stage = -1;
    auto [p, ec] = std::from_chars(stage_text.data(), stage_text.data() + stage_text.size(), stage);
    if (ec != std::errc() || p != stage_text.data() + stage_text.size() || stage < 0 ||
        stage >= stages) {
      diags.add(at(f[1].column), "",
                fmt::format("stage '{}' is not a stage of this pipeline (allowed: 0..{})",
                            stage_text, stages - 1));
      continue;
    }
    auto& stage_lines = seen[std::string(op)];
    if (stage_lines.count(stage)) {
      diags.add(at(f[0].column), "",
                fmt::format("{} of stage {} is given twice (also line {})", op, stage,
                            stage_lines[stage]));
      continue;
    }
    std::string_view duration = trim(f[2].value), bytes = trim(f[3].value);
    std::optional<double> cv;
    if (has_cv) {
      std::string_view cv_text = trim(f[4].value);
      if (!field->time && !cv_text.empty()) {
        diags.add(at(f[4].column), "", fmt::format("{} is a size; leave the cv column empty", op));
        continue;
      }
      if (field->time) {
        cv = parse_cv(cv_text);
        if (!cv) {
          diags.add(at(f[4].column), "",
                    fmt::format("the cv of {} on stage {} must be a number from 0 to 10 (the "
                                "coefficient of variation over the repetitions), got '{}'",
                                op, stage, cv_text));
          continue;
        }
      }
    }
    StageCost& sc = out.stages[static_cast<std::size_t>(stage)];
    try {
      if (field->time) {
        if (!bytes.empty()) {
          diags.add(at(f[3].column), "",
                    fmt::format("{} is a duration; leave the bytes column empty", op));
          continue;
        }
        sc.*(field->time) = parse_time(duration);
      } else {
        if (!duration.empty()) {
          diags.add(at(f[2].column), "",
                    fmt::format("{} is a size; leave the duration column empty", op));
          continue;
        }
        sc.*(field->bytes) = parse_bytes(bytes);
      }
    } catch (const QuantityError& e) {
      diags.add(at(field->time ? f[2].column : f[3].column), "",
                fmt::format("{} of stage {}: {}", op, stage, e.what()));
      continue;
    }
    stage_lines[stage] = line_no;
    out.ops.insert(std::string(op));
    if (cv) {
      std::vector<double>& cvs = out.cv[std::string(op)];
      cvs.resize(static_cast<std::size_t>(stages), 0.0);
      cvs[static_cast<std::size_t>(stage)] = *cv;
    }
  }
  if (!header && diags.empty())
    diags.add(SourceLocation{file, 0, 0}, "", fmt::format("no header line '{}'", kHeader));
  for (std::string_view required : {"forward", "backward_input"}) {
    if (header && !seen.count(std::string(required))) {
      diags.add(SourceLocation{file, 0, 0}, "",
                fmt::format("the profile has no {} rows; it needs one per stage", required));
    }
  }
  for (const auto& [op, lines] : seen) {
    for (int s = 0; s < stages; ++s) {
      if (!lines.count(s)) {
        diags.add(SourceLocation{file, 0, 0}, "",
                  fmt::format("{} has no row for stage {} (every stage 0..{} needs one)", op, s,
                              stages - 1));
      }
    }
  }
  diags.throw_if_any();
  if (!out.ops.count("recompute")) {
    for (StageCost& s : out.stages) s.recompute = s.forward;
  }
  return out;
}

}  // namespace bubblesim
