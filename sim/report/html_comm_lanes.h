#pragma once
// The HTML report's communication lanes (docs/outputs.md; internal to html_report.cpp): under
// each device's timeline row, one thin lane with the communication of that device as the
// replay ran it: the stage-to-stage sends (p2p), the tensor-parallel collectives inside its ops
// (TP), its data-parallel and replica gradient buckets (DP), the ZeRO parameter all-gathers
// (inside ZeRO-3's ops; after the optimizer step at levels 1 and 2) and the expert all-to-all.
// A piece of a slice during which the device computes is drawn pale (hidden), the rest full
// (exposed: the device waits, or the op waits inside), so a reader sees what is exposed where.
//
// The sends, TP collectives and buckets come from the replay's events (CommLaneRecorder, an
// observer run with the HTML report of a scenario on a topology: under fixed-delay
// communication a send is a constant delay and there is no collective, and the page has no
// lane); the ZeRO-3 gathers inside ops come from the stage costs.

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "sim/engine/observer.h"
#include "sim/runner/scenario_runner.h"

namespace bubblesim {

/// Records one replay's sends and collectives per device: its first `max_slices` in time, which
/// hold every slice of a report's exact window when they are about three per op it embeds (a
/// send and a TP collective per op, a few buckets), and bound the memory of a long replay.
class CommLaneRecorder : public EngineObserver {
 public:
  explicit CommLaneRecorder(std::size_t max_slices = 3 * 100000 + 1000) : max_slices_(max_slices) {}
  void on_transfer_start(const TransferEvent& e) override;
  void on_transfer_end(const TransferEvent& e) override;
  void on_collective(const CollectiveEvent& e) override;

  struct Slice {
    std::int32_t device = 0;
    char kind = 'p';  // p p2p, t TP, d DP bucket, z ZeRO gather, a all-to-all
    Time start, end;
    std::string name;
  };
  const std::vector<Slice>& slices() const { return slices_; }

 private:
  std::size_t max_slices_;
  std::vector<Slice> slices_;
  std::vector<std::pair<std::uint32_t, std::size_t>> open_;  // transfer id -> its slice
};

/// The lanes of `run`: [device, kind, start_us, end_us, exposed (0/1), name] for every slice
/// that starts before `exact_until_us` and in the first iteration, pieces split where the device
/// starts or stops computing. Empty when there is nothing to draw (no recorder and no
/// collectives inside ops).
nlohmann::json comm_lane_slices(const ResolvedScenario& resolved, const ScheduleRun& run,
                                const CommLaneRecorder* recorder, double exact_until_us);

}  // namespace bubblesim
