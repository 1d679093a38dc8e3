#include "schedules/torch_csv.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <stdexcept>

#include "sim/units/csv_records.h"
#include "sim/units/diagnostics.h"
#include "sim/units/text_file.h"

namespace bubblesim {
namespace {

constexpr std::int64_t kMaxTorchIndex =
    1'000'000;  // stages and microbatches; far beyond any real file

// Every type code PyTorch has used, in either dialect. OVERLAP_F_B is only a compound's type.
constexpr std::array<std::string_view, 14> kKnownCodes = {
    "F",           "I",      "W",      "B",      "BW",     "UNSHARD",       "RESHARD",
    "REDUCE_GRAD", "SEND_F", "RECV_F", "SEND_B", "RECV_B", "SEND_F_RECV_B", "SEND_B_RECV_F"};

bool is_known_code(std::string_view code) {
  return std::find(kKnownCodes.begin(), kKnownCodes.end(), code) != kKnownCodes.end();
}

/// One `[stage][code][microbatch]` action as written, before the dialect gives it a meaning.
struct RawAction {
  std::int64_t stage = 0;
  std::string code;
  std::optional<std::int64_t> microbatch;
  int column = 0;  // 1-based column of its first character
};

/// A non-empty cell: one action or a compound OVERLAP_F_B pair.
struct RawCell {
  int row = 0;     // 0-based rank
  int column = 0;  // 1-based column of the cell's first non-blank character
  std::string text;
  std::vector<RawAction> actions;  // 1, or 2 for a compound
  bool compound = false;
};

class CsvImporter {
 public:
  CsvImporter(std::string file, std::optional<TorchDialect> dialect)
      : file_(std::move(file)), dialect_(dialect) {}

  TorchCsvImport run(std::string_view text) {
    split_and_parse(text);
    diags_.throw_if_any();
    TorchCsvImport out;
    out.detected = !dialect_.has_value();
    out.dialect = dialect_ ? *dialect_ : detect();
    diags_.throw_if_any();
    out.table = build(out.dialect);
    diags_.throw_if_any();
    out.note = note_;
    return out;
  }

 private:
  // `row` -1: the file as a whole, no position.
  void error(int row, int column, std::string message) {
    const int line = row < 0 ? 0 : row_lines_[static_cast<std::size_t>(row)];
    diags_.add(SourceLocation{file_, line, column}, "", std::move(message));
  }

  // Python's csv module writes plain cells here (actions contain no comma or quote), but accept a
  // quoted cell all the same. One record is one rank; trailing blank lines are not ranks.
  void split_and_parse(std::string_view text) {
    std::vector<CsvRecord> records;
    CsvReader reader(text);
    while (std::optional<CsvRecord> record = reader.next()) records.push_back(std::move(*record));
    while (!records.empty() &&
           records.back().text().find_first_not_of(" \t") == std::string_view::npos)
      records.pop_back();
    rows_ = static_cast<int>(records.size());
    for (int row = 0; row < rows_; ++row) {
      const CsvRecord& record = records[static_cast<std::size_t>(row)];
      row_lines_.push_back(record.line);
      for (const CsvField& field : record.fields)
        parse_cell(row, field.column, std::string(field.value));
    }
  }

  void parse_cell(int row, int column, const std::string& raw) {
    std::size_t first = raw.find_first_not_of(" \t");
    if (first == std::string::npos) return;  // idle
    std::size_t last = raw.find_last_not_of(" \t");
    std::string text = raw.substr(first, last - first + 1);
    RawCell cell{row, column + static_cast<int>(first), text, {}, false};
    if (text.front() == '(') {
      std::size_t close = text.find(')');
      if (close == std::string::npos) {
        error(row, cell.column,
              fmt::format("'{}': a compound action needs a closing ')', as in (0F7;7B3)OVERLAP_F_B",
                          text));
        return;
      }
      std::string type = text.substr(close + 1);
      if (type != "OVERLAP_F_B") {
        error(row, cell.column + static_cast<int>(close) + 1,
              fmt::format("'{}': unknown compound type '{}' (allowed: OVERLAP_F_B)", text, type));
        return;
      }
      std::string inner = text.substr(1, close - 1);
      std::size_t semi = inner.find(';');
      if (semi == std::string::npos || inner.find(';', semi + 1) != std::string::npos) {
        error(row, cell.column,
              fmt::format("'{}': OVERLAP_F_B needs exactly two actions joined by ';'", text));
        return;
      }
      cell.compound = true;
      bool ok = true;
      for (auto [offset, part] : {std::pair{std::size_t{1}, inner.substr(0, semi)},
                                  std::pair{semi + 2, inner.substr(semi + 1)}}) {
        auto a = parse_action(row, cell.column + static_cast<int>(offset), part);
        if (a)
          cell.actions.push_back(*a);
        else
          ok = false;
      }
      if (ok) cells_.push_back(std::move(cell));
      return;
    }
    if (auto a = parse_action(row, cell.column, text)) {
      cell.actions.push_back(*a);
      cells_.push_back(std::move(cell));
    }
  }

  // Full match of (digits)(CODE)(digits?): no trailing text, no unknown code.
  std::optional<RawAction> parse_action(int row, int column, const std::string& s) {
    RawAction a;
    a.column = column;
    std::size_t i = 0;
    auto digits = [&](std::int64_t& value) {
      std::size_t begin = i;
      value = 0;
      while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
        value = std::min<std::int64_t>(value * 10 + (s[i] - '0'), kMaxTorchIndex + 1);
        ++i;
      }
      return i > begin;
    };
    const std::string form = "should be [stage][action type][microbatch], e.g. 2F0";
    if (!digits(a.stage)) {
      error(row, column, fmt::format("invalid action '{}': it {}", s, form));
      return std::nullopt;
    }
    std::size_t code_begin = i;
    while (i < s.size() && ((s[i] >= 'A' && s[i] <= 'Z') || s[i] == '_')) ++i;
    a.code = s.substr(code_begin, i - code_begin);
    if (a.code.empty()) {
      error(row, column + static_cast<int>(code_begin),
            fmt::format("invalid action '{}': no action type after the stage; it {}", s, form));
      return std::nullopt;
    }
    if (!is_known_code(a.code)) {
      error(row, column + static_cast<int>(code_begin),
            fmt::format("invalid action '{}': unknown action type '{}' (allowed: F, I, W, B in the "
                        "current dialect; "
                        "F, B, W, BW in the 2024 dialect)",
                        s, a.code));
      return std::nullopt;
    }
    std::int64_t mb = 0;
    if (digits(mb)) a.microbatch = mb;
    if (i != s.size()) {
      error(row, column + static_cast<int>(i),
            fmt::format("invalid action '{}': unexpected trailing text '{}' after '{}'", s,
                        s.substr(i), s.substr(0, i)));
      return std::nullopt;
    }
    if (a.stage > kMaxTorchIndex || mb > kMaxTorchIndex) {
      error(row, column, fmt::format("invalid action '{}': index above {}", s, kMaxTorchIndex));
      return std::nullopt;
    }
    return a;
  }

  TorchDialect detect() {
    std::optional<std::pair<const RawCell*, std::string>> current_sign, legacy_sign;
    bool has_w = false;
    for (const RawCell& c : cells_) {
      if (c.compound && !current_sign) current_sign.emplace(&c, "OVERLAP_F_B");
      for (const RawAction& a : c.actions) {
        if ((a.code == "I" || a.code == "REDUCE_GRAD") && !current_sign)
          current_sign.emplace(&c, a.code);
        if ((a.code == "BW" || a.code == "SEND_F_RECV_B" || a.code == "SEND_B_RECV_F") &&
            !legacy_sign) {
          legacy_sign.emplace(&c, a.code);
        }
        has_w = has_w || a.code == "W";
      }
    }
    if (current_sign && legacy_sign) {
      const RawCell& l = *legacy_sign->first;
      error(l.row, l.column,
            fmt::format("cannot detect the dialect: '{}' is a 2024-dialect code but '{}' (row {}) "
                        "is a current-dialect "
                        "code; give the dialect explicitly",
                        legacy_sign->second, current_sign->second, current_sign->first->row + 1));
      return TorchDialect::Current;
    }
    if (current_sign) return TorchDialect::Current;
    if (legacy_sign) return TorchDialect::Legacy2024;
    if (has_w)
      return TorchDialect::Legacy2024;  // W without I cannot validate in the current dialect
    note_ =
        "the file has only F and B actions: read in PyTorch's current dialect (B = full backward, "
        "what torch.distributed.pipelining loads today); give dialect: 2024 for B = "
        "backward-for-inputs";
    return TorchDialect::Current;
  }

  enum class Kind { F, I, W, B };  // B = full backward

  std::optional<Kind> meaning(const RawCell& c, const RawAction& a, TorchDialect d) {
    const bool current = d == TorchDialect::Current;
    if (a.code == "F") return Kind::F;
    if (a.code == "W") return Kind::W;
    if (a.code == "I" && current) return Kind::I;
    if (a.code == "B") return current ? Kind::B : Kind::I;
    if (a.code == "BW" && !current) return Kind::B;
    if (a.code == "I" || a.code == "BW") {
      error(c.row, a.column,
            fmt::format("'{}': {} is not a code of the {} dialect (current: I, W, B = full "
                        "backward; 2024: B, W, BW = "
                        "full backward)",
                        c.text, a.code, torch_dialect_name(d)));
      return std::nullopt;
    }
    error(c.row, a.column,
          fmt::format("'{}': {} is a communication or sharding action; a compute-only schedule "
                      "file must not contain "
                      "one (export the compute_only format)",
                      c.text, a.code));
    return std::nullopt;
  }

  struct Parsed {
    const RawCell* cell;
    Kind kind;
    std::int32_t stage, microbatch;
    int column;
  };

  // Stages and microbatches are numbered from 0 without gaps: a number past a gap (a typo such as
  // 0F99 among microbatches 0..7) is reported at its cell, not as every stage's wrong counts; and
  // a file with fewer actions than stages x microbatches is refused before tables that big exist.
  void check_numbering(const std::vector<std::vector<Parsed>>& per_cell, std::int64_t stages,
                       std::int64_t microbatches) {
    std::set<std::int32_t> stage_set, microbatch_set;
    std::int64_t actions = 0;
    for (const auto& ps : per_cell) {
      for (const Parsed& p : ps) {
        stage_set.insert(p.stage);
        microbatch_set.insert(p.microbatch);
        ++actions;
      }
    }
    auto first_gap = [](const std::set<std::int32_t>& used) {
      std::int32_t expected = 0;
      for (auto v = used.begin(); v != used.end() && *v == expected; ++v) ++expected;
      return expected;
    };
    const std::int32_t stage_gap = first_gap(stage_set), mb_gap = first_gap(microbatch_set);
    for (const auto& ps : per_cell) {
      for (const Parsed& p : ps) {
        if (p.stage <= stage_gap && p.microbatch <= mb_gap) continue;
        const bool stage = p.stage > stage_gap;
        const char* what = stage ? "stage" : "microbatch";
        error(p.cell->row, p.column,
              fmt::format("'{}': {} {}, but {} {} never appears; they are numbered from 0 without "
                          "gaps",
                          p.cell->text, what, stage ? p.stage : p.microbatch, what,
                          stage ? stage_gap : mb_gap));
        diags_.throw_if_any();
      }
    }
    if (stages * microbatches <= actions) return;
    error(-1, 0,
          fmt::format("{} stages x {} microbatches need at least {} forwards, but the file has {} "
                      "actions",
                      stages, microbatches, stages * microbatches, actions));
    diags_.throw_if_any();
  }

  Table build(TorchDialect dialect) {
    // Meanings first, so that every bad cell is reported.
    std::vector<std::vector<Parsed>> per_cell;
    std::int64_t max_stage = -1, max_mb = -1;
    for (const RawCell& c : cells_) {
      std::vector<Parsed> ps;
      bool ok = true;
      if (c.compound && dialect != TorchDialect::Current) {
        error(c.row, c.column,
              fmt::format("'{}': OVERLAP_F_B exists only in the current dialect", c.text));
        continue;
      }
      for (const RawAction& a : c.actions) {
        std::optional<Kind> k = meaning(c, a, dialect);
        if (!k) {
          ok = false;
          continue;
        }
        if (!a.microbatch) {
          error(c.row, a.column,
                fmt::format("'{}': the action needs a microbatch number, e.g. {}{}0", c.text,
                            a.stage, a.code));
          ok = false;
          continue;
        }
        ps.push_back({&c, *k, static_cast<std::int32_t>(a.stage),
                      static_cast<std::int32_t>(*a.microbatch), a.column});
        max_stage = std::max(max_stage, a.stage);
        max_mb = std::max(max_mb, *a.microbatch);
      }
      if (ok && c.compound) {
        bool forward_first =
            ps[0].kind == Kind::F && (ps[1].kind == Kind::B || ps[1].kind == Kind::I);
        if (!forward_first) {
          error(c.row, c.column,
                fmt::format("'{}': OVERLAP_F_B pairs a forward with a backward, forward first, as "
                            "in (0F7;7B3)OVERLAP_F_B",
                            c.text));
          ok = false;
        }
      }
      if (ok) per_cell.push_back(std::move(ps));
    }
    diags_.throw_if_any();
    check_numbering(per_cell, max_stage + 1, max_mb + 1);

    Table t;
    t.devices = rows_;
    t.stages = static_cast<std::int32_t>(max_stage + 1);
    t.microbatches = static_cast<std::int32_t>(max_mb + 1);
    t.chunks = t.devices > 0 && t.stages % t.devices == 0 ? t.stages / t.devices : 1;
    t.device_ops.resize(static_cast<std::size_t>(t.devices));
    std::vector<std::int32_t> rank_of(static_cast<std::size_t>(t.stages), -1);
    const std::size_t S = static_cast<std::size_t>(t.stages),
                      M = static_cast<std::size_t>(t.microbatches);
    std::vector<std::array<int, 4>> counts(S, {0, 0, 0, 0});
    std::vector<std::uint8_t> seen_f(S * M, 0), seen_i(S * M, 0);

    for (const auto& ps : per_cell) {
      const RawCell& c = *ps.front().cell;
      for (const Parsed& p : ps) {
        const auto s = static_cast<std::size_t>(p.stage);
        const std::size_t k = s * M + static_cast<std::size_t>(p.microbatch);
        std::int32_t& owner = rank_of[s];
        if (owner >= 0 && owner != c.row) {
          error(c.row, p.column,
                fmt::format(
                    "'{}': stage {} is assigned to both rank {} and rank {}; a stage must live "
                    "on one rank",
                    c.text, p.stage, owner, c.row));
        } else {
          owner = c.row;
        }
        ++counts[s][static_cast<std::size_t>(p.kind)];
        switch (p.kind) {
          case Kind::F:
            seen_f[k] = 1;
            break;
          case Kind::I:
          case Kind::B:
            if (!seen_f[k]) {
              error(c.row, p.column,
                    fmt::format("'{}': {} of stage {}, microbatch {} runs before its forward",
                                c.text, p.kind == Kind::I ? "backward-for-inputs" : "full backward",
                                p.stage, p.microbatch));
            }
            if (p.kind == Kind::I) seen_i[k] = 1;
            break;
          case Kind::W:
            if (!seen_i[k]) {
              error(c.row, p.column,
                    fmt::format("'{}': weight gradient of stage {}, microbatch {} runs before its "
                                "backward-for-inputs",
                                c.text, p.stage, p.microbatch));
            }
            break;
        }
      }
      std::vector<Op>& ops = t.device_ops[static_cast<std::size_t>(c.row)];
      if (c.compound) {
        ops.push_back(Op::fused(ps[0].stage, ps[0].microbatch, ps[1].stage, ps[1].microbatch));
        continue;
      }
      const Parsed& p = ps.front();
      switch (p.kind) {
        case Kind::F:
          ops.push_back(Op::forward(p.stage, p.microbatch));
          break;
        case Kind::I:
        case Kind::B:
          ops.push_back(Op::backward(p.stage, p.microbatch));
          break;
        case Kind::W:
          ops.push_back(Op::weight(p.stage, p.microbatch));
          break;
      }
    }
    const std::string i_code = dialect == TorchDialect::Current ? "I" : "B";
    const std::string b_code = dialect == TorchDialect::Current ? "B" : "BW";
    for (std::size_t s = 0; s < S; ++s) {
      const auto& n = counts[s];
      const int nf = n[0], ni = n[1], nw = n[2], nb = n[3];
      SourceLocation whole{file_, 0, 0};
      if (rank_of[s] < 0) {
        diags_.add(
            whole, "",
            fmt::format("stage {} has no actions; stages must be numbered 0..{} without gaps", s,
                        S - 1));
        continue;
      }
      if (nf != t.microbatches) {
        diags_.add(
            whole, "",
            fmt::format("stage {} has {} forwards; every stage needs {} (one per microbatch)", s,
                        nf, t.microbatches));
      }
      if (ni != nw) {
        diags_.add(
            whole, "",
            fmt::format(
                "stage {} has {} {} (backward-for-inputs) but {} W; the counts must be equal", s,
                ni, i_code, nw));
      }
      if (nb * 2 + ni + nw != 2 * t.microbatches) {
        diags_.add(
            whole, "",
            fmt::format(
                "stage {}: {} {} (full backward) + ({} {} + {} W) / 2 must equal {} microbatches",
                s, nb, b_code, ni, i_code, nw, t.microbatches));
      }
    }
    t.placement.device_of_stage = {rank_of};
    return t;
  }

  std::string file_;
  std::optional<TorchDialect> dialect_;
  std::string note_;  // why detection chose the dialect, when the file alone does not decide
  DiagnosticList diags_;
  int rows_ = 0;
  std::vector<int> row_lines_;  // the line each rank's record starts on
  std::vector<RawCell> cells_;
};

}  // namespace

std::string_view torch_dialect_name(TorchDialect dialect) {
  return dialect == TorchDialect::Current ? "current" : "2024";
}

std::optional<TorchDialect> torch_dialect_from_name(std::string_view name) {
  if (name == "current") return TorchDialect::Current;
  if (name == "2024") return TorchDialect::Legacy2024;
  return std::nullopt;
}

TorchCsvImport read_torch_csv(std::string_view text, const std::string& file,
                              std::optional<TorchDialect> dialect) {
  return CsvImporter(file, dialect).run(text);
}

TorchCsvImport read_torch_csv_file(const std::string& path, std::optional<TorchDialect> dialect) {
  return read_torch_csv(read_text_file(path, InputSource::file, kMaxTableFileBytes), path, dialect);
}

}  // namespace bubblesim
