#include <algorithm>

#include "schedules/replay_rules.h"
#include "sim/engine/list_replay_lanes.h"

namespace bubblesim::list_replay {

// Runs every lane as far as its inputs allow, in sweeps over the lanes that alternate
// direction (activations flow forward, gradients backward), until a sweep makes no progress.
// Returns false when an op is not F, B or W: the general loop continues from the lanes' state.
bool run_plain(const PlainTables& t, std::vector<Lane>& lanes, std::vector<DeviceMemory>& memory,
               std::uint64_t& arrivals, std::uint64_t& completed) {
  const std::size_t m = t.m;
  const std::size_t n = lanes.size();
  for (bool up = true;; up = !up) {
    std::uint64_t progress = 0;
    for (std::size_t visit = 0; visit < n; ++visit) {
      Lane& lane = lanes[up ? visit : n - 1 - visit];
      DeviceMemory& mem = memory[up ? visit : n - 1 - visit];
      std::uint32_t i = lane.cursor;
      std::int64_t free = lane.free, busy = 0, exposed = 0;
      for (; i < lane.count; ++i) {
        const Op& op = lane.ops[i];
        const std::int32_t s = op.stage;
        const std::size_t k =
            static_cast<std::size_t>(s) * m + static_cast<std::size_t>(op.microbatch);
        const StageData& sd = t.stage[s];
        std::int64_t ready = 0, local = 0, length = 0;
        if (op.kind == OpKind::Forward) {
          if (s > 0) {
            const std::int64_t e = t.end_f[k - m];
            if (e == kPending) break;
            if (e >= 0) {
              local = e;
              ready = replay_rules::arrival(e, t.delay_from_prev[s]);
              arrivals += t.delay_from_prev[s] > 0 ? 1 : 0;
            }
          }
          length = sd.forward;
        } else if (op.kind == OpKind::Backward) {
          const std::int64_t f = t.end_f[k];
          if (f == kPending) break;
          local = ready = std::max<std::int64_t>(f, 0);
          if (s + 1 < t.stages) {
            const std::int64_t e = t.end_b[k + m];
            if (e == kPending) break;
            if (e >= 0) {
              local = std::max(local, e);
              ready = std::max(ready, replay_rules::arrival(e, t.delay_from_next[s]));
              arrivals += t.delay_from_next[s] > 0 ? 1 : 0;
            }
          }
          length = replay_rules::backward_duration(sd.backward_input, sd.weight,
                                                   t.end_w != nullptr && t.end_w[k] != kAbsent);
        } else if (op.kind == OpKind::Weight) {
          const std::int64_t e = t.end_b[k];
          if (e == kPending) break;
          local = ready = std::max<std::int64_t>(e, 0);
          length = sd.weight;
        } else {
          return false;
        }
        const std::int64_t start = replay_rules::op_start(free, ready);
        exposed += replay_rules::exposed_wait(start, local, free);  // >= 0: arrivals follow ends
        const std::int64_t end = (Time::from_ps(start) + Time::from_ps(length)).ps();
        lane.row[i] = OpTiming{Time::from_ps(start), Time::from_ps(end)};
        if (lane.first_start < 0) lane.first_start = start;
        busy += length;
        free = end;
        if (op.kind == OpKind::Forward) {
          mem.allocate(sd.activation, true, Time::from_ps(start));
          t.end_f[k] = end;
        } else if (op.kind == OpKind::Backward) {
          const bool split = t.end_w != nullptr && t.end_w[k] != kAbsent;
          const Bytes growth = split ? sd.split_growth : sd.unsplit_growth;
          if (growth > Bytes::zero()) mem.allocate(growth, false, Time::from_ps(start));
          mem.release(split ? sd.split_free : sd.unsplit_free, !split);
          t.end_b[k] = end;
        } else {
          mem.release(sd.weight_free, true);
          t.end_w[k] = end;
        }
      }
      progress += i - lane.cursor;
      lane.busy += busy;
      lane.exposed += exposed;
      lane.cursor = i;
      lane.free = free;
    }
    completed += progress;
    if (progress == 0) return true;  // done, or blocked for good (the caller checks)
  }
}

}  // namespace bubblesim::list_replay
