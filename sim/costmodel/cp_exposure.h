#pragma once
// Internal to the cost model: context parallelism's K, V exchange in one layer and what of it the
// attention does not hide, by `parallelism.cp_algorithm` and `cp_overlap` (docs/parallelism.md).
// model_costs.cpp adds it to each F and B op (`cp_comm` of the stage breakdown).

#include <cstdint>

#include "sim/costmodel/component_timer.h"

namespace bubblesim {

/// Seconds of one layer's exchange left exposed in one F and in one B.
struct CpExposure {
  double forward = 0, backward = 0;
};

/// The exposure of `layer`'s exchange (ComponentComm::cp_kv_bytes: one rank's K, V block) on
/// pipeline stage `stage`'s CP group, its attention timed by `timer`; zero without CP or without
/// a collective timer. The load-balanced chunks give each of the cp blocks 1 / cp of the layer's
/// attention. A ring step and an all-gather of cp blocks (cp - 1 such steps) are timed on the
/// stage's first CP group.
///   ring, overlapped (Transformer Engine's AttnFuncWithCPAndKVP2P): each of the cp - 1 steps
///     sends the next block while one block's attention runs; B's steps carry K, V and the dK, dV
///     accumulated so far (twice the bytes) and end with dK, dV going home, hidden by nothing.
///   all-gather, overlapped (PyTorch's _templated_ring_attention with _AllGatherRotater): F
///     gathers every block behind the local block's attention; B gathers them again the same way
///     and passes the fp32 dK, dV around the ring (_cp_options.convert_to_f32) one step per
///     block, the last step home exposed.
///   not overlapped: every step (ring), or the gather before the attention and, in B, the gather
///     and the reduce-scatter of dK, dV after it (the Llama 3 paper's all-gather CP), exposed.
CpExposure cp_exposure(const ModelCostInputs& in, const ComponentWork& layer,
                       const ComponentTimer& timer, std::int32_t stage);

}  // namespace bubblesim
