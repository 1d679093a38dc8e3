#pragma once
// Section reader `parallelism` + `data_parallel` + `overlap` (docs/parallelism.md, docs/moe.md),
// any may be absent:
//   parallelism:   {dp: D, tp: T, order: [tp, pp, dp], sp, zero, ep: E, a2a_overlap}
//                  rank layout innermost first; E-way expert parallelism over dp ranks
//   data_parallel: {bucket: 25MiB, overlap: true, algorithm: ring|tree|hierarchical,
//                   replica_sync: true}
//   overlap:       {comm_sm_fraction: 0.15}  the SMs an overlapped expert all-to-all holds
//                  {tp_comm_sms: 16}  the SMs the tp_comm_overlap collectives reserve
// Sets Scenario::parallelism (the GPUs of the ranks come later, from the placement).

#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void read_parallelism_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
