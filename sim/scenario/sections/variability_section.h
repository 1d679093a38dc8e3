#pragma once
// Section reader `variability` (docs/variability.md): op times as distributions.
//   variability:
//     cv: 0.05                     # or per kind: {F: 0.04, B: 0.05, W: 0.06, copies: 0.1,
//                                  #               transfers: 0.2} (missing kinds: 0)
//     distribution: lognormal      # normal | lognormal | gamma
//     per: op                      # op | op-kind | device
//     correlation: {within_device: 0.3, across_devices: 0.1}
//     samples: 200
//     seed: 1
// Without `cv`, the F, B and W cvs of `costs.profile`'s cv column (Scenario::measured_cv). A
// per-kind cv for transfers needs a network delay, one for copies an offload policy; within_device
// needs per: op or op-kind; 0 <= across_devices <= within_device <= 1. Sets Scenario::variability.

#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void read_variability_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
