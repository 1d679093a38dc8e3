// An all-to-all hidden under other compute while its kernels hold a share of the SMs
// (overlap.comm_sm_fraction, docs/moe.md): overlap_a2a and DualPipe's fused F&B op.
#include <doctest/doctest.h>

#include "schedules/stage_costs.h"

using namespace bubblesim;

namespace {
Time ms(double v) { return Time::from_seconds(v * 1e-3); }
bool near(Time a, Time b) { return (a > b ? a - b : b - a) <= Time::from_ps(2); }
}  // namespace

TEST_CASE("overlap_a2a: the compute runs at 1 - share while the all-to-all holds SMs") {
  // No SMs held: hidden up to the compute, the rest exposed, nothing slowed.
  A2aOverlap o = overlap_a2a(ms(10), ms(6), 0.0);
  CHECK(o.hidden == ms(6));
  CHECK(o.exposed == ms(4));
  CHECK(o.slowdown == Time::zero());
  // A quarter of the SMs: 6 ms of compute take 8 ms while the 10 ms all-to-all runs; it is
  // hidden for 8 ms, exposed for 2, and the compute lost 2.
  o = overlap_a2a(ms(10), ms(6), 0.25);
  CHECK(near(o.hidden, ms(8)));
  CHECK(near(o.exposed, ms(2)));
  CHECK(near(o.slowdown, ms(2)));
  // A short all-to-all under long compute: fully hidden, the compute slowed by share x a2a; the
  // pair lasts max(a2a, compute + share x a2a).
  o = overlap_a2a(ms(4), ms(20), 0.25);
  CHECK(o.hidden == ms(4));
  CHECK(o.exposed == Time::zero());
  CHECK(near(o.slowdown, ms(1)));
  CHECK(overlap_a2a(Time::zero(), ms(20), 0.25).slowdown == Time::zero());
}

TEST_CASE("fused F&B: each half's all-to-all under the other half's compute, SMs shared") {
  StageCost c;
  c.forward = ms(30);  // 20 compute + 10 all-to-all, exposed when F runs alone
  c.moe.a2a_forward = c.moe.a2a_forward_exposed = ms(10);
  c.backward_input = ms(50);  // 40 compute + 10 all-to-all
  c.moe.a2a_backward = c.moe.a2a_backward_exposed = ms(10);
  c.backward_weight = ms(15);
  // Both all-to-alls fit under the other half's compute: nothing exposed.
  CHECK(fused_forward_backward(c, c, c.backward_input) == ms(60));
  CHECK(fused_a2a_exposed(c, c, c.backward_input) == Time::zero());
  // 20% of the SMs held: the compute under each 10 ms all-to-all loses 2 ms.
  c.moe.a2a_sm.share = 0.2;
  const A2aOverlap o = fused_a2a(c, c, c.backward_input);
  CHECK(o.hidden == ms(20));
  CHECK(o.exposed == Time::zero());
  CHECK(near(o.slowdown, ms(4)));
  CHECK(near(fused_forward_backward(c, c, c.backward_input), ms(64)));
  // A longer B all-to-all than F's compute: 30 ms under 20 ms of compute slowed to 25 ms.
  c.moe.a2a_backward = c.moe.a2a_backward_exposed = ms(30);
  c.backward_input = ms(70);
  const A2aOverlap p = fused_a2a(c, c, c.backward_input);
  CHECK(near(p.exposed, ms(5)));
  CHECK(near(p.slowdown, ms(2) + ms(5)));
  CHECK(near(fused_forward_backward(c, c, c.backward_input), ms(60) + ms(12)));
}
