#include "sim/runner/tied_embedding.h"

#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>
#include <utility>

#include "sim/engine/collectives.h"

namespace bubblesim {

TiedEmbeddingSync resolve_tied_embedding(const Scenario& sc) {
  TiedEmbeddingSync out;
  if (!sc.model || !sc.model->embedding.tied || sc.model->embedding.vocab <= 0 || sc.stages <= 1)
    return out;
  const TransformerModel& m = *sc.model;
  // Megatron splits the embedding by vocabulary over the TP ranks: each all-reduces its shard.
  out.bytes = static_cast<double>(m.embedding.vocab) * static_cast<double>(m.hidden) *
              static_cast<double>(m.dtype.bytes) / static_cast<double>(sc.parallelism.tp);
  if (sc.communication.kind != CommunicationKind::FixedDelay) return out;
  if (!sc.gpu || !sc.gpu->nvlink_bandwidth || !(sc.gpu->nvlink_bandwidth->bytes_per_second() > 0)) {
    throw InputError({Diagnostic{
        m.embedding.where, "model.tied_embeddings",
        fmt::format("a tied embedding ({}) all-reduces its {:.0f}-byte gradient between the first "
                    "and the last stage every iteration, and fixed-delay cannot time it: give "
                    "cluster.gpu.nvlink_bandwidth (or a cluster.gpu.preset that has one), use a "
                    "topology, or set model.tied_embeddings: false",
                    m.embedding.tied_given ? "model.tied_embeddings: true"
                                           : "the default, or the model preset's",
                    out.bytes)}});
  }
  // A 2-rank ring all-reduce: each rank sends half the bytes twice (reduce-scatter, all-gather).
  out.fixed_delay = Time::from_seconds(out.bytes / sc.gpu->nvlink_bandwidth->bytes_per_second());
  return out;
}

std::vector<PairSync> tied_embedding_pairs(const Scenario& sc, const TiedEmbeddingSync& sync,
                                           const Table& table) {
  std::vector<PairSync> out;
  if (!(sync.bytes > 0) || table.stages <= 1) return out;
  std::vector<std::pair<std::int32_t, std::int32_t>> seen;
  for (const std::vector<std::int32_t>& devices : table.placement.device_of_stage) {
    if (devices.size() != static_cast<std::size_t>(table.stages)) continue;
    std::int32_t a = devices.front(), b = devices.back();
    if (a == b) continue;
    if (a > b) std::swap(a, b);
    if (std::find(seen.begin(), seen.end(), std::pair{a, b}) != seen.end()) continue;
    seen.emplace_back(a, b);
    PairSync pair{"tied-embedding all-reduce", a, b, sync.fixed_delay};
    const CommunicationSpec& comm = sc.communication;
    if (comm.kind == CommunicationKind::Topology && comm.topology) {
      const std::vector<VertexId> group{comm.placement.at(static_cast<std::size_t>(a)),
                                        comm.placement.at(static_cast<std::size_t>(b))};
      try {
        pair.duration = simulate_collective(*comm.topology, group, CollectiveKind::AllReduce,
                                            CollectiveAlgorithm::Ring, sync.bytes,
                                            sc.parallelism.data_parallel.ring_steps)
                            .simulated;
      } catch (const std::invalid_argument& e) {
        throw InputError(
            {Diagnostic{sc.model->embedding.where, "model.tied_embeddings", e.what()}});
      }
    }
    out.push_back(std::move(pair));
  }
  return out;
}

}  // namespace bubblesim
