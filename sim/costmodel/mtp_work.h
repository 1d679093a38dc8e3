#pragma once
// DeepSeek-V3's multi-token prediction (MTP) module, `model.mtp_depth` (docs/models.md,
// "Multi-token prediction"). Each depth k takes the previous depth's hidden state and the
// embedding of the token k places ahead, normalises both (RMSNorm), projects their
// concatenation 2h -> h (M_k), runs one transformer block and sends the result through the shared
// output head to a second cross-entropy loss (DeepSeek-V3 report, arXiv 2412.19437, sec. 2.2).
// The stage that holds the LM head runs it (model_costs.cpp): the block and the head pass reuse
// the per-layer and LM-head work of layer_work.h; this file has what only the MTP module does.

#include "sim/costmodel/layer_work.h"

namespace bubblesim {

/// What one MTP depth does besides its transformer block and its pass through the shared head,
/// on one GPU: the lookup of the shifted tokens in the shared embedding (its gradient scattered
/// into the embedding's), the two norms, the concatenation and the projection M_k (a
/// column-parallel linear without bias whose output is gathered over TP, as Megatron-LM's
/// `eh_proj`). Its parameters are the two norms, M_k and the depth's own final norm (DeepSeek's
/// `shared_head.norm`; the head matrix and the embedding are the main model's).
ComponentWork mtp_projection_work(const TransformerModel& model, const Sharding& sharding);

/// Whether the MTP block is a MoE layer: it follows the model's last layer (DeepSeek-V3 stores it
/// as layer 61 of 61 + 1), so it is one when that layer index is past `moe.dense_layers`.
bool mtp_block_is_moe(const TransformerModel& model);

/// The parameters of the model's `mtp_depth` MTP modules: per depth the projection part's and
/// one transformer block's (the shared embedding and output head not counted again: DeepSeek's
/// "11.5B unique parameters" of README_WEIGHTS.md). 0 at depth 0.
double mtp_parameters(const TransformerModel& model);

}  // namespace bubblesim
