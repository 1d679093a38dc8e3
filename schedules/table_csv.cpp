#include "schedules/table_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>
#include <tuple>

#include "sim/units/csv_records.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {
namespace {

constexpr std::string_view kHeader =
    "device,position,kind,stage,microbatch,backward_stage,backward_microbatch,start_s,end_s";
constexpr std::string_view kShapePrefix = "# bubblesim table:";
constexpr std::int64_t kMaxTableIndex = 1'000'000;

std::optional<std::int64_t> parse_index(std::string_view s) {
  std::int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v < 0 || v > kMaxTableIndex)
    return std::nullopt;
  return v;
}

}  // namespace

std::string write_table_csv(const Table& table, const OpTimes& times) {
  std::string out =
      fmt::format("{} devices={} stages={} chunks={} microbatches={}\n{}\n", kShapePrefix,
                  table.devices, table.stages, table.chunks, table.microbatches, kHeader);
  for (std::size_t d = 0; d < table.device_ops.size(); ++d) {
    for (std::size_t i = 0; i < table.device_ops[d].size(); ++i) {
      const Op& op = table.device_ops[d][i];
      std::string bs, bj, start, end;
      if (op.kind == OpKind::ForwardBackward) {
        bs = std::to_string(op.backward_stage);
        bj = std::to_string(op.backward_microbatch);
      }
      if (d < times.size() && i < times[d].size()) {
        start = fmt::format("{:.12g}", times[d][i].first.seconds());
        end = fmt::format("{:.12g}", times[d][i].second.seconds());
      }
      out += fmt::format("{},{},{},{},{},{},{},{},{}\n", d, i, op_kind_letter(op.kind), op.stage,
                         op.microbatch, bs, bj, start, end);
    }
  }
  return out;
}

Table read_table_csv(std::string_view text, const std::string& file) {
  DiagnosticList diags;
  struct Row {
    std::int64_t device, position;
    Op op;
    int line;
  };
  std::vector<Row> rows;
  std::map<std::string, std::int64_t> shape;
  bool header_seen = false;
  CsvReader reader(text, CsvComments::Hash);
  while (const std::optional<CsvRecord> record = reader.next()) {
    const int line_no = record->line;
    const std::string_view line = record->text();
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    if (record->comment) {
      if (line.substr(0, kShapePrefix.size()) == kShapePrefix) {
        std::string_view rest = line.substr(kShapePrefix.size());
        std::size_t pos = 0;
        while (pos < rest.size()) {
          std::size_t b = rest.find_first_not_of(' ', pos);
          if (b == std::string_view::npos) break;
          std::size_t e = rest.find(' ', b);
          std::string_view kv =
              rest.substr(b, e == std::string_view::npos ? std::string_view::npos : e - b);
          std::size_t eq = kv.find('=');
          auto v = eq == std::string_view::npos ? std::nullopt : parse_index(kv.substr(eq + 1));
          if (!v) {
            diags.add(SourceLocation{file, line_no, static_cast<int>(kShapePrefix.size() + b) + 1},
                      "",
                      fmt::format(
                          "'{}': expected KEY=COUNT (devices, stages, chunks, microbatches)", kv));
          } else {
            shape[std::string(kv.substr(0, eq))] = *v;
          }
          pos = e == std::string_view::npos ? rest.size() : e;
        }
      }
      continue;
    }
    if (!header_seen) {
      if (line != kHeader) {
        diags.add(SourceLocation{file, line_no, 1}, "",
                  fmt::format("expected the header line '{}'", kHeader));
        break;
      }
      header_seen = true;
      continue;
    }
    const std::vector<CsvField>& f = record->fields;
    if (f.size() != 9 && f.size() != 7) {
      diags.add(SourceLocation{file, line_no, 1}, "",
                fmt::format("expected 9 columns ({}), got {}", kHeader, f.size()));
      continue;
    }
    auto index = [&](std::size_t k, const char* what) {
      auto v = parse_index(f[k].value);
      if (!v) {
        diags.add(SourceLocation{file, line_no, f[k].column}, "",
                  fmt::format("{} '{}' is not a whole number from 0 to {}", what, f[k].value,
                              kMaxTableIndex));
      }
      return v;
    };
    auto d = index(0, "device");
    auto p = index(1, "position");
    std::optional<OpKind> kind =
        f[2].value.size() == 1 ? op_kind_from_letter(f[2].value[0]) : std::nullopt;
    if (!kind) {
      diags.add(SourceLocation{file, line_no, f[2].column}, "",
                fmt::format("kind '{}' is not one of F B W R O L X", f[2].value));
    }
    auto s = index(3, "stage");
    auto j = index(4, "microbatch");
    std::optional<std::int64_t> bs, bj;
    if (kind == OpKind::ForwardBackward) {
      bs = index(5, "backward_stage");
      bj = index(6, "backward_microbatch");
      if (!bs || !bj) continue;
    } else if (!f[5].value.empty() || !f[6].value.empty()) {
      diags.add(SourceLocation{file, line_no, f[5].column}, "",
                "backward_stage/backward_microbatch are only for kind X");
      continue;
    }
    if (!d || !p || !kind || !s || !j) continue;
    Op op{*kind, static_cast<std::int32_t>(*s), static_cast<std::int32_t>(*j),
          static_cast<std::int32_t>(bs.value_or(-1)), static_cast<std::int32_t>(bj.value_or(-1))};
    rows.push_back({*d, *p, op, line_no});
  }
  if (!header_seen && diags.empty())
    diags.add(SourceLocation{file, 0, 0}, "", "the file has no header line");
  diags.throw_if_any();

  Table t;
  std::int64_t max_d = -1, max_s = -1, max_j = -1;
  for (const Row& r : rows) {
    max_d = std::max(max_d, r.device);
    max_s = std::max({max_s, static_cast<std::int64_t>(r.op.stage),
                      static_cast<std::int64_t>(r.op.backward_stage)});
    max_j = std::max({max_j, static_cast<std::int64_t>(r.op.microbatch),
                      static_cast<std::int64_t>(r.op.backward_microbatch)});
  }
  auto pick = [&](const char* key, std::int64_t inferred) {
    auto it = shape.find(key);
    return static_cast<std::int32_t>(it != shape.end() ? it->second : inferred);
  };
  t.devices = pick("devices", max_d + 1);
  t.stages = pick("stages", max_s + 1);
  t.microbatches = pick("microbatches", max_j + 1);
  t.chunks = pick("chunks", t.devices > 0 && t.stages % t.devices == 0 ? t.stages / t.devices : 1);
  if (max_d >= t.devices || max_s >= t.stages || max_j >= t.microbatches) {
    diags.add(SourceLocation{file, 0, 0}, "",
              fmt::format("the rows use devices up to {}, stages up to {}, microbatches up to {}, "
                          "beyond the shape line "
                          "(devices={}, stages={}, microbatches={})",
                          max_d, max_s, max_j, t.devices, t.stages, t.microbatches));
    diags.throw_if_any();
  }
  std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) {
    return std::tie(a.device, a.position) < std::tie(b.device, b.position);
  });
  t.device_ops.resize(static_cast<std::size_t>(t.devices));
  for (std::size_t k = 0; k < rows.size(); ++k) {
    if (k > 0 && rows[k].device == rows[k - 1].device && rows[k].position == rows[k - 1].position) {
      diags.add(SourceLocation{file, rows[k].line, 1}, "",
                fmt::format("device {} position {} is listed twice (also line {})", rows[k].device,
                            rows[k].position, rows[k - 1].line));
    }
    t.device_ops[static_cast<std::size_t>(rows[k].device)].push_back(rows[k].op);
  }
  // Placement: the device of every (stage, microbatch) from its forward half.
  const auto S = static_cast<std::size_t>(t.stages), M = static_cast<std::size_t>(t.microbatches);
  std::vector<std::vector<std::int32_t>> device_of(M, std::vector<std::int32_t>(S, -1));
  for (std::size_t d = 0; d < t.device_ops.size(); ++d) {
    for (const Op& op : t.device_ops[d]) {
      if (op.kind == OpKind::Forward || op.kind == OpKind::ForwardBackward) {
        device_of[static_cast<std::size_t>(op.microbatch)][static_cast<std::size_t>(op.stage)] =
            static_cast<std::int32_t>(d);
      }
    }
  }
  for (std::size_t j = 0; j < M; ++j) {
    for (std::size_t s = 0; s < S; ++s) {
      if (device_of[j][s] < 0) {
        diags.add(SourceLocation{file, 0, 0}, "",
                  fmt::format("F{}.{} is missing: no device runs it", s, j));
        device_of[j][s] = 0;
      }
    }
  }
  for (std::size_t j = 0; j < M; ++j) {
    auto it = std::find(t.placement.device_of_stage.begin(), t.placement.device_of_stage.end(),
                        device_of[j]);
    if (it == t.placement.device_of_stage.end()) {
      t.placement.device_of_stage.push_back(device_of[j]);
      it = t.placement.device_of_stage.end() - 1;
    }
    t.placement.replica_of_microbatch.push_back(
        static_cast<std::int32_t>(it - t.placement.device_of_stage.begin()));
  }
  if (t.placement.replicas() <= 1) t.placement.replica_of_microbatch.clear();
  if (t.placement.device_of_stage.empty()) t.placement.device_of_stage.push_back({});
  diags.throw_if_any();
  return t;
}

}  // namespace bubblesim
