// Reproduces the 1F1B, ZB-H1 and ZB-H2 columns of the zero-bubble paper's Table 5 from its Table 9
// profiled times (tests/data/zb_paper_table5_subset.csv, copied from the paper): every
// stage has the same T_F, T_B, T_W; 1F1B runs B and W as one op, ZB-H1/H2 split them; T_comm is a
// fixed delay on every cross-stage F->F and B->B edge; the rate is bubble_ratio_span.
#include <doctest/doctest.h>

#include <cmath>

#include "engine_test_support.h"
#include "zb_table5_rows.h"

using namespace bubblesim;
using namespace bubblesim::testing;

TEST_CASE("1F1B bubble rates of ZB paper Table 5 are reproduced to 4 decimals") {
  auto rows = read_rows();
  REQUIRE(rows.size() == 6);
  for (const Row& row : rows) {
    CAPTURE(row.model);
    CAPTURE(row.m);
    StageCost c = stage_cost_ms(row.tf, row.tb, row.tw);
    Table t = generate("1f1b", row.p, row.m, c);
    SimulationResult r = replay(t, c, FixedDelayNetwork{Time::from_seconds(row.tcomm * 1e-3)});
    REQUIRE(r.status == RunStatus::Ok);
    double rounded = std::round(r.metrics.bubble_ratio_span * 1e4) / 1e4;
    CHECK(rounded == doctest::Approx(row.bubble_1f1b).epsilon(1e-9));
  }
}

TEST_CASE("ZB-H1 and ZB-H2 bubble rates of ZB paper Table 5 are reproduced to 4 decimals") {
  auto rows = read_rows();
  REQUIRE(rows.size() == 6);
  for (const Row& row : rows) {
    for (const char* name : {"zb-h1", "zb-h2"}) {
      CAPTURE(row.model);
      CAPTURE(row.m);
      CAPTURE(name);
      StageCost c = stage_cost_ms(row.tf, row.tb, row.tw);
      Table t = generate(name, row.p, row.m, c);
      SimulationResult r = replay(t, c, FixedDelayNetwork{Time::from_seconds(row.tcomm * 1e-3)});
      REQUIRE(r.status == RunStatus::Ok);
      double rounded = std::round(r.metrics.bubble_ratio_span * 1e4) / 1e4;
      const double expected = std::string(name) == "zb-h1" ? row.bubble_zb_h1 : row.bubble_zb_h2;
      CHECK(rounded == doctest::Approx(expected).epsilon(1e-9));
    }
  }
}
