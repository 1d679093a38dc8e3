#pragma once
// Measured cost profiles: `costs: {profile: FILE}` in a scenario reads per-stage costs from a CSV
// that a profiler writes (format in docs/profile-format.md):
//
//   # any comment or metadata line starts with '#'
//   op,stage,duration,bytes,cv
//   forward,0,18.5ms,,0.031
//   activation,0,,1GiB,
//
// op is forward | backward_input | backward_weight | recompute | fused_forward_backward (a
// duration with a unit) or activation | weight_grad | stage_input | p2p | static (bytes with a
// unit). One row per (op, stage); an op that appears must have a row for every stage 0..p-1;
// forward and backward_input are required. recompute defaults to forward. The `cv` column is
// optional (older profiles have four columns): each duration's coefficient of variation over the
// profiler's repetitions, a plain fraction, required on every duration row when the column exists.

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/stage_costs.h"

namespace bubblesim {

struct MeasuredProfile {
  std::vector<StageCost> stages;
  std::set<std::string> ops;  // the ops the file gave
  /// With the cv column: per duration op ("forward", ...), each stage's coefficient of variation.
  std::map<std::string, std::vector<double>> cv;
};

/// Parses `text` for a `stages`-stage pipeline; `file` names it in diagnostics. Throws
/// InputError listing every problem with FILE:LINE:COL.
MeasuredProfile read_cost_profile_csv(std::string_view text, const std::string& file, int stages);

}  // namespace bubblesim
