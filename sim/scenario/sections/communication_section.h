#pragma once
// Section reader `communication` + `topology` + `placement` (README "Scenario keys"):
//   communication: {model: fixed-delay, delay: 0.6ms}          a constant delay, no bandwidth
//   communication: {model: topology, topology: FILE | inline}  flows over the cluster graph
//   communication: {all_to_all: shared | idle}  the expert all-to-all as flows sharing links with
//                                               all traffic (default), or timed on an idle
//                                               network into the ops (docs/moe.md)
// (a top-level `topology:` is the same as communication.topology; `model` defaults to topology
// when one is given) and `placement` (placement.h). Parallelism needs a topology.
// Sets Scenario::communication (and the GPUs of Scenario::parallelism).

#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

struct Scenario;

void read_communication_section(LoadContext& context, Scenario& scenario);

}  // namespace bubblesim
