// zb-v, v-half, v-min, dualpipe, dualpipe-v: tables match their published orders (the PyTorch
// DualPipeV golden file action for action), validate over a grid of (p, m), and reject shapes they
// cannot build with a message saying what would fit.
#include <doctest/doctest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "generator_test_support.h"
#include "schedules/registry.h"
#include "schedules/table_index.h"
#include "schedules/validator.h"

using namespace bubblesim;
using namespace bubblesim::testing;

namespace {

Table generate(const std::string& name, int p, int m) {
  return registry().find(name)->generate(input(p, m));
}

// One computation of a PyTorch schedule CSV cell (current dialect, docs/schedule-rules.md 7.1): F,
// I (input backward; its W is elsewhere), B (full backward), W.
struct CsvAction {
  char type = 'F';
  std::int32_t stage = 0, microbatch = 0;
  friend bool operator==(const CsvAction&, const CsvAction&) = default;
};
// A cell: one action, or a fused pair (forward first) written (aFj;bBk)OVERLAP_F_B.
struct CsvCell {
  std::vector<CsvAction> actions;
  friend bool operator==(const CsvCell&, const CsvCell&) = default;
};

CsvAction parse_action(const std::string& text) {
  static const std::regex action(R"((\d+)([FIBW])(\d+))");
  std::smatch m;
  REQUIRE_MESSAGE(std::regex_match(text, m, action), "not an action: " << text);
  return CsvAction{m[2].str()[0], std::stoi(m[1].str()), std::stoi(m[3].str())};
}

CsvCell parse_cell(const std::string& text) {
  static const std::regex fused(R"(\((\d+F\d+);(\d+[BI]\d+)\)OVERLAP_F_B)");
  std::smatch m;
  if (std::regex_match(text, m, fused))
    return CsvCell{{parse_action(m[1].str()), parse_action(m[2].str())}};
  return CsvCell{{parse_action(text)}};
}

std::vector<std::vector<CsvCell>> read_csv(const std::string& path) {
  std::ifstream file(path);
  REQUIRE_MESSAGE(file.good(), "cannot open " << path);
  std::vector<std::vector<CsvCell>> rows;
  std::string line;
  while (std::getline(file, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::vector<CsvCell> row;
    std::stringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) row.push_back(parse_cell(cell));
    rows.push_back(std::move(row));
  }
  return rows;
}

// Our op as the PyTorch cell it stands for: B is I when the table has its W, else the full B.
CsvCell to_cell(const Op& op, const TableIndex& index) {
  auto backward = [&](std::int32_t s, std::int32_t j) {
    return CsvAction{index.has_weight(s, j) ? 'I' : 'B', s, j};
  };
  switch (op.kind) {
    case OpKind::Forward:
      return CsvCell{{CsvAction{'F', op.stage, op.microbatch}}};
    case OpKind::Backward:
      return CsvCell{{backward(op.stage, op.microbatch)}};
    case OpKind::Weight:
      return CsvCell{{CsvAction{'W', op.stage, op.microbatch}}};
    case OpKind::ForwardBackward:
      return CsvCell{{CsvAction{'F', op.stage, op.microbatch},
                      backward(op.backward_stage, op.backward_microbatch)}};
    default:
      return CsvCell{{CsvAction{'?', op.stage, op.microbatch}}};
  }
}

std::string describe(const CsvCell& c) {
  std::string s;
  for (const CsvAction& a : c.actions)
    s += (s.empty() ? "" : ";") + std::to_string(a.stage) + a.type + std::to_string(a.microbatch);
  return s;
}

int count_kind(const Table& t, OpKind kind) {
  int n = 0;
  for (const auto& ops : t.device_ops) {
    for (const Op& op : ops) n += op.kind == kind ? 1 : 0;
  }
  return n;
}

template <typename F>
std::string constraint_message(F&& f) {
  try {
    f();
  } catch (const ScheduleConstraintError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("the test's CSV cell parser reads plain, input-backward and fused cells") {
  CHECK(parse_cell("0F3") == CsvCell{{CsvAction{'F', 0, 3}}});
  CHECK(parse_cell("7I0") == CsvCell{{CsvAction{'I', 7, 0}}});
  CHECK(parse_cell("7B6") == CsvCell{{CsvAction{'B', 7, 6}}});
  CHECK(parse_cell("(0F7;7B3)OVERLAP_F_B") ==
        CsvCell{{CsvAction{'F', 0, 7}, CsvAction{'B', 7, 3}}});
}

TEST_CASE(
    "dualpipe-v with 4 devices and 10 microbatches is PyTorch's golden order action for action") {
  const auto golden =
      read_csv(std::string(BUBBLESIM_SOURCE_DIR) + "/tests/data/dualpipev_4rank_10mb.csv");
  Table t = generate("dualpipe-v", 4, 10);
  REQUIRE(validate_table(t).empty());
  REQUIRE(golden.size() == 4);
  TableIndex index(t);
  for (std::size_t r = 0; r < 4; ++r) {
    CAPTURE(r);
    const auto& ops = t.device_ops[r];
    REQUIRE(ops.size() == golden[r].size());
    for (std::size_t i = 0; i < ops.size(); ++i) {
      CAPTURE(i);
      CHECK_MESSAGE(
          to_cell(ops[i], index) == golden[r][i],
          "ours " << describe(to_cell(ops[i], index)) << ", golden " << describe(golden[r][i]));
    }
  }
}

TEST_CASE("zb-v follows PyTorch's fixed order on the V") {
  Table t = generate("zb-v", 2, 3);
  REQUIRE(validate_table(t).empty());
  CHECK(t.chunks == 2);
  CHECK(t.stages == 4);
  CHECK(t.placement.device_of(3, 0) == 0);
  CHECK(t.placement.device_of(2, 0) == 1);
  // Device 0: F(c0) x 3; (F(c1), B(c1), W(c1)) x 2; steady loop while F(c1) < F(c0); cool-down.
  // Device 1: F(c0); (F(c1), F(c0)); (F(c1), B(c1), W(c1)); one steady round; cool-down.
  std::string d0;
  for (const Op& op : t.device_ops[0]) d0 += (d0.empty() ? "" : " ") + to_string(op);
  CHECK(
      d0 ==
      "F0.0 F0.1 F0.2 F3.0 B3.0 W3.0 F3.1 B3.1 W3.1 B0.0 W0.0 F3.2 B3.2 W3.2 B0.1 W0.1 B0.2 W0.2");
  std::string d1;
  for (const Op& op : t.device_ops[1]) d1 += (d1.empty() ? "" : " ") + to_string(op);
  CHECK(
      d1 ==
      "F1.0 F2.0 F1.1 F2.1 B2.0 W2.0 F1.2 B1.0 W1.0 F2.2 B2.1 W2.1 B1.1 B2.2 B1.2 W1.1 W2.2 W1.2");
}

TEST_CASE("every zoo-b generator gives a valid table over a grid of (p, m) it accepts") {
  for (const char* name : {"zb-v", "v-half", "v-min", "dualpipe", "dualpipe-v"}) {
    for (int p = 1; p <= 8; ++p) {
      for (int m = 1; m <= 3 * p + 3; ++m) {
        CAPTURE(name);
        CAPTURE(p);
        CAPTURE(m);
        Table t;
        try {
          t = generate(name, p, m);
        } catch (const ScheduleConstraintError&) {
          continue;
        }
        CHECK(validate_table(t).empty());
        // B/W split: every backward has its W except the full backwards of the DualPipe family.
        if (std::string(name).rfind("dualpipe", 0) != 0) {
          CHECK(count_kind(t, OpKind::Weight) == t.stages * m);
        }
      }
    }
  }
}

TEST_CASE("dualpipe places two mirrored replicas and splits microbatches between them") {
  Table t = generate("dualpipe", 4, 8);
  REQUIRE(validate_table(t).empty());
  CHECK(t.placement.replicas() == 2);
  CHECK(t.placement.device_of(0, 0) == 0);
  CHECK(t.placement.device_of(0, 4) == 3);
  CHECK(t.placement.device_of(3, 7) == 0);
  // Device 0 holds stage 0 of direction 0 and stage 3 of direction 1 and starts with F0 x 2.
  CHECK(t.device_ops[0][0] == Op::forward(0, 0));
  CHECK(t.device_ops[0][1] == Op::forward(0, 1));
  // Device 3 is the mirror: its phase 0 is direction 1 (stage 0, microbatches 4..7).
  CHECK(t.device_ops[3][0] == Op::forward(0, 4));
  CHECK(t.device_ops[3][1] == Op::forward(0, 5));
  CHECK(count_kind(t, OpKind::ForwardBackward) > 0);
}

TEST_CASE("the overlap parameter turns fused pairs into F then B") {
  GeneratorInput in = input(4, 10);
  in.params.set("overlap", false);
  for (const char* name : {"dualpipe", "dualpipe-v"}) {
    CAPTURE(name);
    Table t = registry().find(name)->generate(in);
    CHECK(validate_table(t).empty());
    CHECK(count_kind(t, OpKind::ForwardBackward) == 0);
    CHECK(count_kind(t, OpKind::Forward) == t.stages * 10);
  }
}

TEST_CASE("shapes the DualPipe family cannot build are rejected with what would fit") {
  CHECK(constraint_message([] { generate("dualpipe", 3, 12); }).find("even number of devices") !=
        std::string::npos);
  CHECK(constraint_message([] { generate("dualpipe", 4, 9); }) ==
        "dualpipe needs an even number of microbatches m >= 2p = 8 (got m = 9); use m = 10");
  CHECK(constraint_message([] { generate("dualpipe", 4, 6); }) ==
        "dualpipe needs an even number of microbatches m >= 2p = 8 (got m = 6); use m = 8");
  CHECK(constraint_message([] { generate("dualpipe-v", 4, 7); }) ==
        "dualpipe-v needs m >= 2p = 8 microbatches (got m = 7); use m >= 8 or fewer devices (p <= "
        "3)");
  CHECK(constraint_message([] { generate("dualpipe-v", 3, 6); }).empty());  // no evenness needed
}

TEST_CASE("zoo-b generators describe themselves and publish their peaks") {
  for (const char* name : {"zb-v", "v-half", "v-min", "dualpipe", "dualpipe-v"}) {
    CAPTURE(name);
    const Generator* g = registry().find(name);
    REQUIRE(g != nullptr);
    CHECK(!g->info.description.empty());
    CHECK(!g->info.source.empty());
    CHECK(!g->info.placement.empty());
    CHECK(!g->formula(input(4, 8)).note.empty());
  }
  CHECK(registry().find("zb-v")->formula(input(4, 8)).peak_activation_units.value_or(-1) == 8);
  CHECK(registry().find("v-half")->formula(input(8, 24)).peak_activation_units.value_or(-1) == 10);
  CHECK(registry().find("v-min")->formula(input(8, 24)).peak_activation_units.value_or(-1) == 8);
  CHECK(registry().find("dualpipe")->formula(input(4, 8)).peak_activation_units.value_or(-1) == 5);
  CHECK(registry().find("dualpipe-v")->formula(input(4, 8)).peak_activation_units.value_or(-1) ==
        9);
}
