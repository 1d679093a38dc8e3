// The pairing pass of `parallelism.a2a_overlap` (schedules/passes/a2a_pairing.h): each B directly
// followed by an F becomes one F&B op in the B's place, unless that would deadlock.
#include "schedules/passes/a2a_pairing.h"

#include <doctest/doctest.h>

#include "schedules/validator.h"

using namespace bubblesim;

namespace {

Op F(std::int32_t s, std::int32_t j) { return Op::forward(s, j); }
Op B(std::int32_t s, std::int32_t j) { return Op::backward(s, j); }
Op FB(std::int32_t fs, std::int32_t fj, std::int32_t bs, std::int32_t bj) {
  return Op::fused(fs, fj, bs, bj);
}

Table two_stages(std::int32_t microbatches, std::vector<std::vector<Op>> ops) {
  Table t = Table::empty(2, 1, microbatches, Placement::straight(2));
  t.device_ops = std::move(ops);
  return t;
}

}  // namespace

TEST_CASE("a2a pairing: 1F1B's steady-state B and the F after it, each device on its own") {
  // 1F1B, p = 2, m = 4: device 0 warms up with one extra forward.
  const Table t =
      two_stages(4, {{F(0, 0), F(0, 1), B(0, 0), F(0, 2), B(0, 1), F(0, 3), B(0, 2), B(0, 3)},
                     {F(1, 0), B(1, 0), F(1, 1), B(1, 1), F(1, 2), B(1, 2), F(1, 3), B(1, 3)}});
  const PairingResult r = pair_backward_forward(t);
  CHECK(r.candidates == 5);
  CHECK(r.refused == 0);
  CHECK(r.pairs_per_device == std::vector<std::int64_t>{2, 3});
  CHECK(r.table.device_ops[0] ==
        std::vector<Op>{F(0, 0), F(0, 1), FB(0, 2, 0, 0), FB(0, 3, 0, 1), B(0, 2), B(0, 3)});
  CHECK(r.table.device_ops[1] ==
        std::vector<Op>{F(1, 0), FB(1, 1, 1, 0), FB(1, 2, 1, 1), FB(1, 3, 1, 2), B(1, 3)});
  CHECK(validate_table(r.table).empty());
}

TEST_CASE("a2a pairing: a pair that would deadlock is left apart") {
  // Device 0's B0 needs device 1's B0; fused, device 1's B0 would wait for device 0's F1, which
  // fused waits for device 0's B0: both pairs form the cycle and both stay apart.
  const Table t =
      two_stages(2, {{F(0, 0), B(0, 0), F(0, 1), B(0, 1)}, {F(1, 0), B(1, 0), F(1, 1), B(1, 1)}});
  const PairingResult r = pair_backward_forward(t);
  CHECK(r.candidates == 2);
  CHECK(r.refused == 2);
  CHECK(r.pairs_per_device == std::vector<std::int64_t>{0, 0});
  CHECK(r.table.device_ops == t.device_ops);
}

TEST_CASE("a2a pairing: a table that fuses already, or has no B before an F, is unchanged") {
  const Table fused =
      two_stages(2, {{F(0, 0), F(0, 1), B(0, 0), B(0, 1)}, {F(1, 0), FB(1, 1, 1, 0), B(1, 1)}});
  PairingResult r = pair_backward_forward(fused);
  CHECK(r.candidates == 0);
  CHECK(r.table.device_ops == fused.device_ops);
  const Table gpipe =
      two_stages(2, {{F(0, 0), F(0, 1), B(0, 0), B(0, 1)}, {F(1, 0), F(1, 1), B(1, 0), B(1, 1)}});
  r = pair_backward_forward(gpipe);
  CHECK(r.candidates == 0);
  CHECK(r.table.device_ops == gpipe.device_ops);
}
