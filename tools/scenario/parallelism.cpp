#include "tools/scenario/parallelism.h"

#include <fmt/format.h>

#include <algorithm>

namespace bubblesim {

std::size_t ParallelismSpec::rank_index(std::int32_t stages, std::int32_t s, std::int32_t r,
                                        std::int32_t t) const {
  std::size_t index = 0, stride = 1;
  for (const std::string& dim : order) {
    std::int32_t size = dim == "tp" ? tp : dim == "dp" ? dp : stages;
    std::int32_t coord = dim == "tp" ? t : dim == "dp" ? r : s;
    index += static_cast<std::size_t>(coord) * stride;
    stride *= static_cast<std::size_t>(size);
  }
  return index;
}

void read_parallelism(const std::optional<YamlNode>& parallelism,
                      const std::optional<YamlNode>& data_parallel, ParallelismSpec& spec,
                      DiagnosticList& diags) {
  if (parallelism) {
    spec.enabled = true;
    spec.where = parallelism->location();
    MapReader m(*parallelism, diags, {"dp", "tp", "order"});
    if (parallelism->is_map()) {
      if (auto v = m.integer("dp", 1, 65536)) spec.dp = static_cast<std::int32_t>(*v);
      if (auto v = m.integer("tp", 1, 1024)) spec.tp = static_cast<std::int32_t>(*v);
      if (auto order = m.get("order")) {
        std::vector<std::string> dims;
        bool ok = order->is_sequence();
        if (!ok)
          order->error(diags,
                       fmt::format("expected a list of tp, pp and dp, got {}", order->describe()));
        for (const YamlNode& e : ok ? order->elements() : std::vector<YamlNode>{}) {
          if (auto c = e.as_choice(diags, {"tp", "pp", "dp"}))
            dims.push_back(*c);
          else
            ok = false;
        }
        if (ok) {
          std::vector<std::string> sorted = dims;
          std::sort(sorted.begin(), sorted.end());
          if (sorted != std::vector<std::string>{"dp", "pp", "tp"}) {
            order->error(
                diags,
                fmt::format("order must list tp, pp and dp once each (innermost first), got [{}]",
                            fmt::join(dims, ", ")));
          } else {
            spec.order = dims;
          }
        }
      }
    }
  }
  if (data_parallel) {
    spec.enabled = true;
    if (spec.where.line == 0) spec.where = data_parallel->location();
    MapReader m(*data_parallel, diags, {"bucket", "overlap", "algorithm", "replica_sync"});
    if (data_parallel->is_map()) {
      if (m.has("bucket")) {
        if (auto b = m.bytes("bucket")) {
          if (b->count() <= 0)
            data_parallel->child("bucket").error(diags, "the bucket must be larger than 0 bytes");
          else
            spec.bucket = *b;
        }
      }
      if (m.has("overlap")) {
        if (auto v = m.boolean("overlap")) spec.overlap = *v;
      }
      if (m.has("replica_sync")) {
        if (auto v = m.boolean("replica_sync")) spec.replica_sync = *v;
      }
      if (m.has("algorithm")) {
        if (auto a = m.choice("algorithm", {"ring", "tree", "hierarchical"})) {
          spec.algorithm = *a == "ring"   ? CollectiveAlgorithm::Ring
                           : *a == "tree" ? CollectiveAlgorithm::Tree
                                          : CollectiveAlgorithm::Hierarchical;
        }
      }
    }
  }
}

}  // namespace bubblesim

#include "tools/scenario/scenario.h"
#include "tools/scenario/transformer_costs.h"

namespace bubblesim {

void resolve_parallel_costs(Scenario& sc, const ParallelCostInputs& inputs, DiagnosticList& diags) {
  ParallelismSpec& par = sc.parallelism;
  if (!par.enabled || sc.stages <= 0 ||
      sc.costs.stages.size() != static_cast<std::size_t>(sc.stages))
    return;
  const auto p = static_cast<std::size_t>(sc.stages);
  const std::int64_t t = par.tp;
  // Whole-stage gradient bytes before the split: explicit, from the transformer (fp32 gradients,
  // Megatron's main_grad: 4 bytes per parameter), or from static memory (4 of its 18 bytes per
  // parameter are the fp32 gradient).
  std::vector<double> grad(p, 0.0);
  std::vector<std::int64_t> layers;
  if (sc.model) layers = split_layers(sc.model->layers, sc.stages);
  for (std::size_t s = 0; s < p; ++s) {
    if (!inputs.gradient_bytes.empty()) {
      grad[s] = inputs.gradient_bytes[s].as_double();
    } else if (sc.model) {
      TransformerLayerCosts lc = transformer_layer_costs(*sc.model);
      double params = lc.parameters * static_cast<double>(layers[s]);
      if (s == 0 || s + 1 == p) params += lc.embedding_parameters;
      grad[s] = params * 4.0;
    } else {
      grad[s] = sc.costs.stages[s].static_memory.as_double() * 4.0 / 18.0;
    }
  }
  if (t > 1) {
    auto div = [&](Time x) { return Time::from_ps(x.ps() / t); };
    auto divb = [&](Bytes x) { return Bytes(x.count() / t); };
    for (StageCost& c : sc.costs.stages) {
      c.forward = div(c.forward);
      c.backward_input = div(c.backward_input);
      c.backward_weight = div(c.backward_weight);
      c.recompute = div(c.recompute);
      c.fused = div(c.fused);
      // Megatron sequence parallelism: every activation tensor is split over the T ranks
      // (Korthikanti et al. eq. 5: s b h (34 + 5 a s / h) / t), and the p2p hidden state is sent
      // as T shards in parallel (scatter-gather), so each GPU sends 1/T of it.
      c.activation = divb(c.activation);
      c.weight_grad = divb(c.weight_grad);
      c.stage_input = divb(c.stage_input);
      c.p2p = divb(c.p2p);
      c.static_memory = divb(c.static_memory);
    }
  }
  par.gradient_bytes.assign(p, Bytes::zero());
  par.optimizer.assign(p, Time::zero());
  for (std::size_t s = 0; s < p; ++s) {
    par.gradient_bytes[s] = Bytes(static_cast<std::int64_t>(grad[s] / static_cast<double>(t)));
    if (!inputs.optimizer_step.empty()) {
      par.optimizer[s] = inputs.optimizer_step[s];
    } else if (sc.gpu && sc.gpu->memory_bandwidth &&
               sc.gpu->memory_bandwidth->bytes_per_second() > 0) {
      // Adam reads and writes every byte of weights, gradients and optimizer state once.
      par.optimizer[s] = Time::from_seconds(2.0 * sc.costs.stages[s].static_memory.as_double() /
                                            sc.gpu->memory_bandwidth->bytes_per_second());
    }
  }
  par.tp_forward.assign(p, Time::zero());
  par.tp_backward.assign(p, Time::zero());
  if (t > 1 && sc.model && sc.communication.topology &&
      par.gpus.size() == static_cast<std::size_t>(par.world(sc.stages))) {
    const Topology& topo = *sc.communication.topology;
    const double bytes = transformer_layer_costs(*sc.model).hidden_state_bytes;
    for (std::size_t s = 0; s < p; ++s) {
      std::vector<VertexId> group;
      for (std::int32_t r = 0; r < t; ++r) {
        group.push_back(par.gpus[par.rank_index(sc.stages, static_cast<std::int32_t>(s), 0, r)]);
      }
      CollectiveTiming one;
      try {
        one = simulate_collective(topo, group, CollectiveKind::AllReduce, CollectiveAlgorithm::Ring,
                                  bytes);
      } catch (const std::invalid_argument& e) {
        diags.add(Diagnostic{par.where, "parallelism.tp", e.what()});
        return;
      }
      // Megatron block: 2 all-reduces per layer in forward (attention, MLP), 2 in backward.
      const auto count = 2 * layers[s];
      const Time per_op = Time::from_ps(one.simulated.ps() * count);
      par.tp_forward[s] = per_op;
      par.tp_backward[s] = per_op;
      StageCost& c = sc.costs.stages[s];
      c.forward += per_op;
      c.backward_input += per_op;
      c.recompute += per_op;
      if (c.fused > Time::zero()) c.fused += per_op + per_op;
      par.tp_summaries.push_back(
          CollectiveSummary{fmt::format("tp all-reduce stage {} (per F or B op)", s), "ring",
                            static_cast<std::int32_t>(t), static_cast<std::int32_t>(count),
                            Bytes(static_cast<std::int64_t>(bytes * static_cast<double>(count))),
                            per_op, Time::from_ps(one.closed_form.ps() * count)});
    }
  }
}

}  // namespace bubblesim
