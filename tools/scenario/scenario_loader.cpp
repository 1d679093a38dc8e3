#include "tools/scenario/scenario_loader.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <limits>
#include <stdexcept>
#include <tuple>

#include "schedules/torch_csv.h"
#include "sim/units/yaml_reader.h"
#include "tools/scenario/cost_profile_csv.h"
#include "tools/scenario/transformer_costs.h"
#include "topologies/topology_loader.h"

namespace bubblesim {
namespace {

constexpr std::int64_t kMaxStages = 65536;
constexpr std::int64_t kMaxMicrobatches = 1048576;

std::string join_list(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& s : items) {
    if (!out.empty()) out += ", ";
    out += s;
  }
  return out;
}

/// A value given once for every stage or as a list with one entry per stage.
template <typename T>
struct PerStage {
  std::vector<T> values;  // p entries (or the list as given when p is unknown)
  YamlNode node;
};

/// Reads `key` as a scalar (every stage) or a list of length p. `p` = 0: the pipeline size is
/// unknown (already reported), so the length is not checked. nullopt when absent or invalid.
template <typename T, typename Read>
std::optional<PerStage<T>> per_stage(MapReader& m, const std::string& key, std::int32_t p,
                                     DiagnosticList& d, Read read) {
  std::optional<YamlNode> n = m.get(key);
  if (!n) return std::nullopt;
  PerStage<T> out{{}, *n};
  if (n->is_sequence()) {
    std::vector<YamlNode> elements = n->elements();
    if (p > 0 && elements.size() != static_cast<std::size_t>(p)) {
      n->error(d, fmt::format("expected a single value or a list of {} values (one per pipeline "
                              "stage), got {} values",
                              p, elements.size()));
      return std::nullopt;
    }
    bool ok = true;
    for (const YamlNode& e : elements) {
      std::optional<T> v = read(e);
      if (v) out.values.push_back(*v);
      ok = ok && v.has_value();
    }
    if (!ok) return std::nullopt;
    return out;
  }
  if (n->is_map()) {
    n->error(d,
             "expected a single value or a list with one value per pipeline stage, got a mapping");
    return std::nullopt;
  }
  std::optional<T> v = read(*n);
  if (!v) return std::nullopt;
  out.values.assign(p > 0 ? static_cast<std::size_t>(p) : 1, *v);
  return out;
}

nlohmann::json param_json(const ParamValue& v) {
  struct Visitor {
    nlohmann::json operator()(std::int64_t x) const { return x; }
    nlohmann::json operator()(double x) const { return x; }
    nlohmann::json operator()(bool x) const { return x; }
    nlohmann::json operator()(const std::string& x) const { return x; }
    nlohmann::json operator()(Time x) const { return x.seconds(); }
    nlohmann::json operator()(Bytes x) const { return x.count(); }
  };
  return std::visit(Visitor{}, v);
}

/// The loader's state for one file: diagnostics and what has been read so far.
class Loader {
 public:
  Loader(const Registry& registry, std::string base_dir)
      : registry_(registry), base_dir_(std::move(base_dir)) {}

  Scenario load(const YamlDocument& doc) {
    Scenario sc;
    sc.file = doc.root().file();
    if (doc.ok()) read_top(doc.root(), sc);
    if (!diags_.empty()) {
      // In file order, like a compiler (the readers find some problems only when a map is done).
      std::vector<Diagnostic> items = diags_.items();
      std::stable_sort(items.begin(), items.end(), [](const Diagnostic& a, const Diagnostic& b) {
        return std::tie(a.where.line, a.where.column) < std::tie(b.where.line, b.where.column);
      });
      throw InputError(std::move(items));
    }
    sc.resolved = resolved_json(sc);
    return sc;
  }

  DiagnosticList& diags() { return diags_; }

 private:
  void read_top(const YamlNode& root, Scenario& sc) {
    MapReader top(
        root, diags_,
        {"name", "description", "pipeline", "costs", "model", "cluster", "communication",
         "topology", "placement", "memory", "faults", "schedules", "parallelism", "data_parallel"});
    if (!root.is_map()) return;
    if (auto name = top.require("name")) {
      if (auto s = name->as_string(diags_)) {
        if (s->empty()) name->error(diags_, "the name must not be empty");
        sc.name = *s;
      }
    }
    if (auto desc = top.get("description")) {
      if (auto s = desc->as_string(diags_)) description_ = *s;
    }
    read_pipeline(top, sc);
    read_model_and_cluster(top, sc);
    read_parallelism(top.get("parallelism"), top.get("data_parallel"), sc.parallelism, diags_);
    read_costs(top, root, sc);
    read_communication(top, sc);
    // Parallelism (docs/parallelism.md): TP split, gradient bytes, optimizer; needs the placement.
    if (sc.parallelism.enabled && sc.communication.kind != CommunicationKind::Topology) {
      diags_.add(Diagnostic{
          sc.parallelism.where, "parallelism",
          "parallelism and data_parallel need a topology (communication.model: topology)"});
    } else {
      resolve_parallel_costs(sc, parallel_inputs_, diags_);
    }
    read_memory(top, sc);
    read_faults(top, sc);
    read_schedules(top, sc);
  }

  // `faults: {stragglers: [{device, slowdown}], links: [{between: [a, b], at, bandwidth | cut}]}`.
  void read_faults(MapReader& top, Scenario& sc) {
    std::optional<YamlNode> node = top.get("faults");
    if (!node) return;
    MapReader f(*node, diags_, {"stragglers", "links"});
    if (!node->is_map()) return;
    if (auto stragglers = f.get("stragglers")) read_stragglers(*stragglers, sc);
    if (auto links = f.get("links")) read_link_faults(*links, sc);
  }

  void read_stragglers(const YamlNode& node, Scenario& sc) {
    if (!node.is_sequence()) {
      node.error(
          diags_,
          fmt::format("expected a list of stragglers, e.g. [{{device: 3, slowdown: 1.5}}], got {}",
                      node.is_scalar() ? "'" + node.describe() + "'" : node.describe()));
      return;
    }
    std::vector<double> slowdown(static_cast<std::size_t>(std::max(sc.stages, 0)), 1.0);
    std::vector<bool> seen(slowdown.size(), false);
    for (const YamlNode& e : node.elements()) {
      MapReader r(e, diags_, {"device", "slowdown"});
      if (!e.is_map()) continue;
      std::optional<std::int64_t> device = r.integer("device", 0, kMaxStages - 1);
      std::optional<double> factor = r.real("slowdown", 0.01, 1000.0);
      if (!device || !factor || sc.stages <= 0) continue;
      if (*device >= sc.stages) {
        r.get("device")->error(
            diags_, fmt::format("device {} does not exist: the pipeline has {} devices (0 to {})",
                                *device, sc.stages, sc.stages - 1));
        continue;
      }
      const auto d = static_cast<std::size_t>(*device);
      if (seen[d]) {
        r.get("device")->error(diags_, fmt::format("device {} is listed twice", *device));
        continue;
      }
      seen[d] = true;
      slowdown[d] = *factor;
    }
    if (std::find(seen.begin(), seen.end(), true) != seen.end())
      sc.faults.slowdown = std::move(slowdown);
  }

  void read_link_faults(const YamlNode& node, Scenario& sc) {
    if (!node.is_sequence()) {
      node.error(
          diags_,
          fmt::format(
              "expected a list of link faults, e.g. [{{between: [gpu0, gpu1], at: 10ms, cut: "
              "true}}], got {}",
              node.is_scalar() ? "'" + node.describe() + "'" : node.describe()));
      return;
    }
    const Topology* topo = sc.communication.topology.get();
    if (sc.communication.kind != CommunicationKind::Topology) {
      node.error(diags_, "link faults need a topology (communication.model: topology)");
      return;
    }
    for (const YamlNode& e : node.elements()) {
      MapReader r(e, diags_, {"between", "at", "bandwidth", "cut"});
      if (!e.is_map()) continue;
      LinkFaultSpec spec;
      std::optional<YamlNode> between = r.require("between");
      std::optional<Time> at = r.time("at");
      if (!r.has("at")) r.require("at");
      const bool has_bandwidth = r.has("bandwidth"), has_cut = r.has("cut");
      if (has_bandwidth == has_cut) {
        e.error(diags_, "a link fault needs exactly one of 'bandwidth' (degraded) or 'cut: true'");
        continue;
      }
      if (has_bandwidth) {
        spec.bandwidth = r.bandwidth("bandwidth");
        if (!spec.bandwidth) continue;
      } else {
        std::optional<bool> cut = r.boolean("cut");
        if (!cut) continue;
        if (!*cut) {
          r.get("cut")->error(
              diags_, "'cut: false' is no fault; remove the entry or give a degraded 'bandwidth'");
          continue;
        }
      }
      if (!between || !at || topo == nullptr) continue;
      if (at->ps() < 0) {
        r.get("at")->error(diags_, fmt::format("the fault time must not be negative, got {}", *at));
        continue;
      }
      spec.at = *at;
      std::vector<YamlNode> ends =
          between->is_sequence() ? between->elements() : std::vector<YamlNode>{};
      if (ends.size() != 2) {
        between->error(diags_,
                       fmt::format("expected a list of two vertex names, e.g. [gpu0, gpu1], got {}",
                                   between->is_sequence() ? fmt::format("{} names", ends.size())
                                                          : between->describe()));
        continue;
      }
      std::optional<VertexId> ids[2];
      bool ok = true;
      for (int i = 0; i < 2; ++i) {
        std::optional<std::string> name = ends[static_cast<std::size_t>(i)].as_string(diags_);
        if (!name) {
          ok = false;
          continue;
        }
        ids[i] = topo->find(*name);
        if (!ids[i]) {
          std::vector<std::string> all_names;
          for (VertexId v = 0; v < topo->vertex_count(); ++v)
            all_names.push_back(topo->vertex_name(v));
          std::string suggestion = closest_match(*name, all_names);
          ends[static_cast<std::size_t>(i)].error(
              diags_,
              fmt::format(
                  "unknown vertex '{}'{}", *name,
                  suggestion.empty() ? "" : fmt::format("; did you mean '{}'?", suggestion)));
          ok = false;
          continue;
        }
        (i == 0 ? spec.a : spec.b) = *name;
      }
      if (!ok) continue;
      spec.links = topo->links_between(*ids[0], *ids[1]);
      std::vector<LinkId> back = topo->links_between(*ids[1], *ids[0]);
      spec.links.insert(spec.links.end(), back.begin(), back.end());
      if (spec.links.empty()) {
        between->error(diags_,
                       fmt::format("there is no link between '{}' and '{}'", spec.a, spec.b));
        continue;
      }
      sc.faults.links.push_back(std::move(spec));
    }
  }

  void read_pipeline(MapReader& top, Scenario& sc) {
    std::optional<YamlNode> node = top.require("pipeline");
    if (!node) return;
    MapReader pipe(*node, diags_, {"stages", "microbatches"});
    if (!node->is_map()) return;
    pipeline_node_ = *node;
    auto stages = pipe.require("stages");
    auto micro = pipe.require("microbatches");
    if (stages) {
      if (auto v = stages->as_integer(diags_, 1, kMaxStages))
        sc.stages = static_cast<std::int32_t>(*v);
    }
    if (micro) {
      if (auto v = micro->as_integer(diags_, 1, kMaxMicrobatches))
        sc.microbatches = static_cast<std::int32_t>(*v);
    }
  }

  void read_model_and_cluster(MapReader& top, Scenario& sc) {
    if (auto node = top.get("model")) {
      model_node_ = *node;
      MapReader m(*node, diags_,
                  {"layers", "hidden", "heads", "seq_len", "micro_batch_size", "vocab", "dtype"});
      if (node->is_map()) {
        TransformerModel model;
        bool ok = true;
        auto need = [&](const std::string& key, std::int64_t min, std::int64_t max,
                        std::int64_t& out) {
          std::optional<YamlNode> n = m.require(key);
          std::optional<std::int64_t> v = n ? n->as_integer(diags_, min, max) : std::nullopt;
          if (v) out = *v;
          ok = ok && v.has_value();
        };
        auto optional = [&](const std::string& key, std::int64_t min, std::int64_t max,
                            std::int64_t& out) {
          if (!m.has(key)) return;
          std::optional<std::int64_t> v = m.integer(key, min, max);
          if (v) out = *v;
          ok = ok && v.has_value();
        };
        need("layers", 1, 1'000'000, model.layers);
        need("hidden", 1, 1'000'000, model.hidden);
        need("heads", 1, 1'000'000, model.heads);
        need("seq_len", 1, 100'000'000, model.seq_len);
        optional("micro_batch_size", 1, 1'000'000, model.micro_batch_size);
        optional("vocab", 0, 100'000'000, model.vocab);
        if (m.has("dtype")) {
          if (auto d = m.choice("dtype", {"bf16", "fp16", "fp32", "fp8"})) {
            model.dtype = *d;
            model.dtype_bytes = *d == "fp32" ? 4 : *d == "fp8" ? 1 : 2;
          } else {
            ok = false;
          }
        }
        if (ok && model.hidden % model.heads != 0) {
          m.get("heads")->error(diags_, fmt::format("hidden size {} is not divisible by {} heads",
                                                    model.hidden, model.heads));
          ok = false;
        }
        if (ok) sc.model = model;
        model_ok_ = ok;
      }
    }
    if (auto node = top.get("cluster")) {
      cluster_node_ = *node;
      MapReader cluster(*node, diags_, {"gpu"});
      if (auto gpu_node = cluster.require("gpu")) {
        MapReader g(*gpu_node, diags_, {"flops", "efficiency", "memory", "memory_bandwidth"});
        if (gpu_node->is_map()) {
          GpuSpec gpu;
          bool ok = true;
          if (auto n = g.require("flops")) {
            if (auto f = n->as_flop_rate(diags_))
              gpu.flops = *f;
            else
              ok = false;
          } else {
            ok = false;
          }
          if (auto n = g.get("efficiency")) {
            auto e = n->as_real(diags_, 0.0, 1.0);
            if (e && *e <= 0.0) {
              n->error(diags_,
                       fmt::format("{} is out of range (allowed: above 0 up to 1)", n->describe()));
              e.reset();
            }
            if (e)
              gpu.efficiency = *e;
            else
              ok = false;
          }
          if (g.has("memory")) {
            if (auto b = g.bytes("memory"))
              gpu.memory = *b;
            else
              ok = false;
          }
          if (g.has("memory_bandwidth")) {
            if (auto b = g.bandwidth("memory_bandwidth"))
              gpu.memory_bandwidth = *b;
            else
              ok = false;
          }
          if (ok) sc.gpu = gpu;
          gpu_ok_ = ok;
        }
      }
    }
  }

  void read_costs(MapReader& top, const YamlNode& root, Scenario& sc) {
    const std::int32_t p = sc.stages;
    std::optional<YamlNode> costs_node = top.get("costs");
    const bool have_model = model_node_.has_value();

    // Derived base profile from the transformer description, if any.
    std::optional<CostProfile> derived;
    if (have_model) {
      if (!cluster_node_) {
        model_node_->error(
            diags_,
            "a 'model' needs 'cluster: {gpu: {flops: ..., efficiency: ...}}' to derive costs");
      } else if (model_ok_ && gpu_ok_ && sc.model && sc.gpu && p > 0) {
        try {
          derived = transformer_costs(*sc.model, *sc.gpu, p);
        } catch (const std::invalid_argument& e) {
          YamlNode at = model_node_->child("layers");
          at.error(diags_, e.what());
        }
      }
    }
    if (!costs_node && !have_model) {
      root.error(
          diags_,
          "missing required key 'costs' (or give 'model' and 'cluster' to derive the costs)");
      return;
    }
    costs_source_ = costs_node ? (have_model ? "transformer+explicit" : "explicit") : "transformer";

    std::vector<StageCost> stages(p > 0 ? static_cast<std::size_t>(p) : 0);
    if (derived) stages = derived->stages;

    if (costs_node) {
      MapReader c(
          *costs_node, diags_,
          {"forward", "backward_input", "backward_weight", "recompute", "fused_forward_backward",
           "activation_memory", "weight_grad_memory", "stage_input_memory", "p2p_bytes",
           "static_memory", "profile", "gradient_bytes", "optimizer_step"});
      if (!costs_node->is_map()) return;
      // A measured profile is the base; explicit keys beside it override it.
      bool profile_has_recompute = false;
      if (auto profile = c.get("profile")) {
        if (auto path = profile->as_string(diags_); path && p > 0) {
          std::filesystem::path file(*path);
          if (file.is_relative()) file = std::filesystem::path(base_dir_) / file;
          try {
            MeasuredProfile measured =
                read_cost_profile_csv(read_text_file(file.lexically_normal().string()),
                                      file.lexically_normal().string(), p);
            for (std::size_t s = 0; s < stages.size(); ++s) stages[s] = measured.stages[s];
            profile_has_recompute = measured.ops.count("recompute") != 0;
            costs_source_ = "profile";
          } catch (const InputError& e) {
            for (const Diagnostic& d : e.diagnostics()) {
              profile->error(diags_, fmt::format("in profile {}", d.render()));
            }
          }
        }
      }
      auto read_time = [&](const YamlNode& n) { return n.as_time(diags_); };
      auto read_bytes = [&](const YamlNode& n) { return n.as_bytes(diags_); };
      auto times = [&](const std::string& key, bool required) {
        if (required && !have_model && !c.has("profile")) c.require(key);
        return per_stage<Time>(c, key, p, diags_, read_time);
      };
      auto sizes = [&](const std::string& key) {
        return per_stage<Bytes>(c, key, p, diags_, read_bytes);
      };

      auto forward = times("forward", true);
      auto backward_input = times("backward_input", true);
      auto backward_weight = times("backward_weight", false);
      auto recompute = times("recompute", false);
      auto fused = times("fused_forward_backward", false);
      auto activation = sizes("activation_memory");
      auto weight_grad = sizes("weight_grad_memory");
      auto stage_input = sizes("stage_input_memory");
      auto p2p = sizes("p2p_bytes");
      auto static_memory = sizes("static_memory");
      if (auto g = sizes("gradient_bytes")) parallel_inputs_.gradient_bytes = g->values;
      if (auto o = times("optimizer_step", false)) parallel_inputs_.optimizer_step = o->values;
      if (p <= 0) return;

      for (std::size_t s = 0; s < stages.size(); ++s) {
        StageCost& st = stages[s];
        if (forward) st.forward = forward->values[s];
        if (backward_input) st.backward_input = backward_input->values[s];
        if (backward_weight) st.backward_weight = backward_weight->values[s];
        // R defaults to F: follow an explicit F unless R itself is given.
        if (recompute)
          st.recompute = recompute->values[s];
        else if (forward || (!derived && !profile_has_recompute))
          st.recompute = st.forward;
        if (fused) st.fused = fused->values[s];
        if (activation) st.activation = activation->values[s];
        if (weight_grad) st.weight_grad = weight_grad->values[s];
        if (stage_input) st.stage_input = stage_input->values[s];
        if (p2p) st.p2p = p2p->values[s];
        if (static_memory) st.static_memory = static_memory->values[s];
      }
      // M_W is the part of M_B kept after B, so it cannot exceed it.
      for (std::size_t s = 0; s < stages.size(); ++s) {
        if (stages[s].weight_grad > stages[s].activation) {
          YamlNode at = weight_grad ? weight_grad->node : costs_node->child("activation_memory");
          if (weight_grad && at.is_sequence()) at = at.elements()[s];
          bool listed = (weight_grad && weight_grad->node.is_sequence()) ||
                        (activation && activation->node.is_sequence());
          std::string where = listed ? fmt::format(" on stage {}", s) : "";
          at.error(diags_,
                   fmt::format("weight_grad_memory ({}) must not exceed activation_memory ({}){}",
                               stages[s].weight_grad, stages[s].activation, where));
          break;
        }
      }
    }
    if (p > 0) sc.costs.stages = std::move(stages);
  }

  void read_communication(MapReader& top, Scenario& sc) {
    std::optional<YamlNode> comm = top.get("communication");
    std::optional<YamlNode> top_topology = top.get("topology");
    std::optional<YamlNode> placement = top.get("placement");
    std::optional<YamlNode> topology_node = top_topology;
    std::string model;

    if (comm) {
      MapReader c(*comm, diags_, {"model", "delay", "topology"});
      if (comm->is_map()) {
        std::optional<YamlNode> inner = c.get("topology");
        if (inner && top_topology) {
          inner->error(diags_,
                       fmt::format("the topology is given twice (also at line {}); keep one",
                                   top_topology->location().line));
        } else if (inner) {
          topology_node = inner;
        }
        if (c.has("model")) {
          auto m = c.choice("model", {"fixed-delay", "topology"});
          if (!m) return;
          model = *m;
        } else {
          model = topology_node ? "topology" : "fixed-delay";
        }
        if (model == "fixed-delay") {
          sc.communication.kind = CommunicationKind::FixedDelay;
          if (auto d = c.time("delay")) sc.communication.delay = *d;
          if (topology_node) {
            topology_node->error(diags_,
                                 "a topology is given but communication.model is fixed-delay; set "
                                 "'model: topology' or remove the topology");
          }
        } else if (auto d = c.get("delay")) {
          d->error(diags_,
                   "'delay' is only used with 'model: fixed-delay' (the topology's links give the "
                   "delays)");
        }
      } else {
        return;
      }
    } else {
      model = topology_node ? "topology" : "fixed-delay";
    }

    if (model == "fixed-delay") {
      sc.communication.kind = CommunicationKind::FixedDelay;
      if (placement) {
        placement->error(diags_, "'placement' needs a topology (communication.model: topology)");
      }
      return;
    }
    sc.communication.kind = CommunicationKind::Topology;
    if (!topology_node) {
      comm->error(
          diags_,
          "'model: topology' needs a topology (communication.topology or a top-level 'topology')");
      return;
    }
    std::optional<Topology> topo = load_topology(*topology_node, base_dir_, diags_);
    if (!topo) return;
    auto shared = std::make_shared<const Topology>(std::move(*topo));
    sc.communication.topology = shared;
    if (sc.stages > 0) read_placement(placement, *topology_node, *shared, sc);
  }

  void read_placement(const std::optional<YamlNode>& placement, const YamlNode& topology_node,
                      const Topology& topo, Scenario& sc) {
    const std::vector<VertexId> gpus = topo.gpus();
    const auto p = static_cast<std::size_t>(sc.stages);
    ParallelismSpec& par = sc.parallelism;
    const auto world = static_cast<std::size_t>(par.world(sc.stages));
    if (par.enabled && (!placement || (placement->is_sequence() &&
                                       placement->elements().size() == world && world != p))) {
      // Ranks in the `order` layout over the topology's GPUs (or the placement list, rank order).
      if (!placement && gpus.size() < world) {
        topology_node.error(
            diags_,
            fmt::format("the topology has {} GPUs but the run needs {} (pipeline {} x dp {} x "
                        "tp {})",
                        gpus.size(), world, p, par.dp, par.tp));
        return;
      }
      std::vector<VertexId> ranks(
          gpus.begin(), gpus.begin() + static_cast<std::ptrdiff_t>(std::min(world, gpus.size())));
      if (placement) {
        ranks.clear();
        for (const YamlNode& e : placement->elements()) {
          auto name = e.as_string(diags_);
          std::optional<VertexId> v = name ? topo.find(*name) : std::nullopt;
          if (!v || topo.vertex_kind(*v) != VertexKind::Gpu) {
            if (name) e.error(diags_, fmt::format("'{}' is not a GPU of the topology", *name));
            return;
          }
          if (std::find(ranks.begin(), ranks.end(), *v) != ranks.end()) {
            e.error(diags_, fmt::format("GPU '{}' is used twice", *name));
            return;
          }
          ranks.push_back(*v);
        }
      }
      par.gpus = ranks;
      sc.communication.placement.clear();
      for (std::size_t s = 0; s < p; ++s) {
        sc.communication.placement.push_back(
            ranks[par.rank_index(sc.stages, static_cast<std::int32_t>(s), 0, 0)]);
      }
      return;
    }
    if (par.enabled && placement && world != p) {
      placement->error(
          diags_,
          fmt::format("placement lists {} GPUs; with parallelism it lists all {} ranks (pipeline "
                      "{} x dp {} x tp {}) in the order layout",
                      placement->is_sequence() ? placement->elements().size() : 0, world, p, par.dp,
                      par.tp));
      return;
    }
    if (!placement) {
      if (gpus.size() < p) {
        topology_node.error(
            diags_, fmt::format("the topology has {} GPUs but the pipeline has {} stages (one GPU "
                                "per stage is needed)",
                                gpus.size(), p));
        return;
      }
      sc.communication.placement.assign(gpus.begin(),
                                        gpus.begin() + static_cast<std::ptrdiff_t>(p));
      require_connected(topology_node, topo, sc.communication.placement);
      return;
    }
    if (!placement->is_sequence()) {
      placement->error(diags_,
                       fmt::format("expected a list of GPU names (one per stage), got {}",
                                   placement->is_scalar() ? "'" + placement->describe() + "'"
                                                          : placement->describe()));
      return;
    }
    std::vector<YamlNode> elements = placement->elements();
    if (elements.size() != p) {
      placement->error(
          diags_, fmt::format("placement lists {} GPUs for {} pipeline stages (one GPU per stage)",
                              elements.size(), p));
      return;
    }
    std::vector<std::string> gpu_names;
    for (VertexId g : gpus) gpu_names.push_back(topo.vertex_name(g));
    std::vector<std::string> all_names;
    for (VertexId v = 0; v < topo.vertex_count(); ++v) all_names.push_back(topo.vertex_name(v));
    std::vector<VertexId> out;
    bool ok = true;
    for (std::size_t s = 0; s < elements.size(); ++s) {
      std::optional<std::string> name = elements[s].as_string(diags_);
      if (!name) {
        ok = false;
        continue;
      }
      std::optional<VertexId> v = topo.find(*name);
      if (!v) {
        std::string suggestion = closest_match(*name, gpu_names);
        if (suggestion.empty()) suggestion = closest_match(*name, all_names);
        std::string known =
            gpu_names.size() <= 16
                ? join_list(gpu_names)
                : fmt::format("{}, ..., {}", join_list({gpu_names.begin(), gpu_names.begin() + 8}),
                              gpu_names.back());
        elements[s].error(
            diags_,
            fmt::format("unknown vertex '{}'{} (GPUs: {})", *name,
                        suggestion.empty() ? "" : fmt::format("; did you mean '{}'?", suggestion),
                        known));
        ok = false;
        continue;
      }
      if (topo.vertex_kind(*v) != VertexKind::Gpu) {
        elements[s].error(diags_, fmt::format("'{}' is a {}, not a GPU", *name,
                                              vertex_kind_name(topo.vertex_kind(*v))));
        ok = false;
        continue;
      }
      for (std::size_t t = 0; t < out.size(); ++t) {
        if (out[t] == *v) {
          elements[s].error(diags_,
                            fmt::format("GPU '{}' is used twice (already by stage {})", *name, t));
          ok = false;
        }
      }
      out.push_back(*v);
    }
    if (ok) {
      sc.communication.placement = out;
      require_connected(*placement, topo, sc.communication.placement);
    }
    if (ok && par.enabled) par.gpus = std::move(out);  // dp = tp = 1: the ranks are the stages
  }

  // Every placed GPU must reach every other (a schedule may send between any two stages; a
  // missing route would otherwise be an instantaneous transfer). Links are full duplex, so
  // components of the undirected graph are what matters.
  void require_connected(const YamlNode& where, const Topology& topo,
                         const std::vector<VertexId>& gpus) {
    if (gpus.size() < 2) return;
    std::vector<VertexId> parent(static_cast<std::size_t>(topo.vertex_count()));
    for (std::size_t v = 0; v < parent.size(); ++v) parent[v] = static_cast<VertexId>(v);
    auto root = [&](VertexId v) {
      while (parent[static_cast<std::size_t>(v)] != v) {
        parent[static_cast<std::size_t>(v)] =
            parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(v)])];
        v = parent[static_cast<std::size_t>(v)];
      }
      return v;
    };
    for (LinkId l = 0; l < topo.link_count(); ++l) {
      VertexId a = root(topo.link_source(l)), b = root(topo.link_target(l));
      if (a != b) parent[static_cast<std::size_t>(a)] = b;
    }
    for (std::size_t s = 1; s < gpus.size(); ++s) {
      if (root(gpus[s]) != root(gpus[0])) {
        where.error(
            diags_,
            fmt::format(
                "no route between '{}' (stage 0) and '{}' (stage {}): the topology does not "
                "connect them",
                topo.vertex_name(gpus[0]), topo.vertex_name(gpus[s]), s));
        return;
      }
    }
  }

  void read_memory(MapReader& top, Scenario& sc) {
    std::optional<YamlNode> node = top.get("memory");
    if (!node) return;
    MapReader m(*node, diags_, {"budget", "host_capacity", "release", "offload", "recompute"});
    if (!node->is_map()) return;
    auto positive_bytes = [&](const YamlNode& n, const char* what) -> std::optional<Bytes> {
      std::optional<Bytes> b = n.as_bytes(diags_);
      if (b && *b <= Bytes::zero()) {
        n.error(diags_, fmt::format("{} must be positive, got '{}'", what, n.describe()));
        return std::nullopt;
      }
      return b;
    };
    if (std::optional<YamlNode> budget = m.get("budget")) {
      auto read_bytes = [&](const YamlNode& n) { return positive_bytes(n, "a memory budget"); };
      if (budget->is_sequence()) {
        auto v = per_stage<Bytes>(m, "budget", sc.stages, diags_, read_bytes);
        if (v && sc.stages > 0) sc.memory.budget = v->values;
      } else if (auto b = read_bytes(*budget)) {
        sc.memory.budget = {*b};
      }
    }
    if (auto n = m.get("host_capacity"))
      sc.memory.host_capacity = positive_bytes(*n, "the host capacity");
    if (m.has("release")) {
      if (auto r = m.choice("release", {"split", "backward-complete"})) {
        sc.memory.release =
            *r == "split" ? ReleaseConvention::Split : ReleaseConvention::BackwardComplete;
      }
    }
    if (auto n = m.get("recompute")) read_recompute(*n, sc);
    if (auto n = m.get("offload")) read_offload(*n, sc);
  }

  static MemoryPolicy policy_of(const std::string& s) {
    return s == "full"        ? MemoryPolicy::Full
           : s == "selective" ? MemoryPolicy::Selective
                              : MemoryPolicy::None;
  }

  /// `stages: [..]` of a memory pass: table stages, non-negative, no duplicates.
  std::optional<std::vector<std::int32_t>> read_stage_list(const YamlNode& n) {
    if (!n.is_sequence()) {
      n.error(diags_, fmt::format("expected a list of table stages, e.g. [0, 1], got {}",
                                  n.is_scalar() ? "'" + n.describe() + "'" : n.describe()));
      return std::nullopt;
    }
    std::vector<std::int32_t> out;
    bool ok = true;
    for (const YamlNode& e : n.elements()) {
      if (auto v = e.as_integer(diags_, 0, kMaxStages - 1)) {
        if (std::find(out.begin(), out.end(), *v) != out.end()) {
          e.error(diags_, fmt::format("stage {} is listed twice", *v));
          ok = false;
        }
        out.push_back(static_cast<std::int32_t>(*v));
      } else {
        ok = false;
      }
    }
    if (ok && out.empty()) {
      n.error(diags_, "expected at least one stage");
      ok = false;
    }
    if (!ok) return std::nullopt;
    std::sort(out.begin(), out.end());
    return out;
  }

  void read_recompute(const YamlNode& node, Scenario& sc) {
    MapReader r(node, diags_, {"policy", "stages", "fraction"});
    if (!node.is_map()) return;
    sc.memory.recompute_where = node.location();
    auto policy = r.choice("policy", {"none", "full", "selective"});
    if (!policy) {
      if (!r.has("policy")) r.require("policy");
      return;
    }
    RecomputeSettings& rs = sc.memory.recompute;
    rs.policy = policy_of(*policy);
    std::optional<YamlNode> stages = r.get("stages");
    std::optional<YamlNode> fraction = r.get("fraction");
    for (const auto& [key, n] : {std::pair{"stages", stages}, std::pair{"fraction", fraction}}) {
      if (n && rs.policy != MemoryPolicy::Selective) {
        n->error(diags_, fmt::format("'{}' is only used with 'policy: selective' (policy is '{}')",
                                     key, *policy));
      }
    }
    if (stages && fraction) {
      fraction->error(diags_, "give either 'stages' or 'fraction', not both");
      return;
    }
    if (stages && rs.policy == MemoryPolicy::Selective) {
      if (auto list = read_stage_list(*stages)) rs.stages = *list;
    }
    if (fraction && rs.policy == MemoryPolicy::Selective) {
      auto f = fraction->as_real(diags_, 0.0, 1.0);
      if (f && *f <= 0.0) {
        fraction->error(diags_, fmt::format("{} is out of range (allowed: above 0 up to 1)",
                                            fraction->describe()));
      } else if (f) {
        rs.fraction = *f;
      }
    }
  }

  void read_offload(const YamlNode& node, Scenario& sc) {
    MapReader o(node, diags_, {"policy", "prefetch", "stages", "min_idle", "bandwidth"});
    if (!node.is_map()) return;
    sc.memory.offload_where = node.location();
    OffloadSettings& os = sc.memory.offload;
    std::optional<YamlNode> policy_node = o.get("policy");
    std::string policy = "none";
    if (policy_node) {
      auto p = policy_node->as_choice(diags_, {"none", "full", "selective"});
      if (!p) return;
      policy = *p;
    } else {
      o.require("policy");
      return;
    }
    os.policy = policy_of(policy);
    if (auto n = o.get("prefetch")) {
      if (auto v = n->as_integer(diags_, 1, 1'000'000)) os.prefetch = static_cast<std::int32_t>(*v);
    }
    if (auto n = o.get("min_idle")) {
      if (auto t = n->as_time(diags_)) os.min_idle = *t;
    }
    if (auto n = o.get("stages")) {
      if (os.policy != MemoryPolicy::Selective) {
        n->error(
            diags_,
            fmt::format("'stages' is only used with 'policy: selective' (policy is '{}')", policy));
      } else if (auto list = read_stage_list(*n)) {
        os.stages = *list;
      }
    }
    std::optional<YamlNode> bandwidth = o.get("bandwidth");
    const CommunicationSpec& comm = sc.communication;
    if (bandwidth) {
      if (comm.kind == CommunicationKind::Topology) {
        bandwidth->error(
            diags_,
            "'bandwidth' is only used with fixed-delay communication; with a topology the "
            "route from each GPU to its host gives the offload bandwidth");
        return;
      }
      auto b = bandwidth->as_bandwidth(diags_);
      if (b && b->bytes_per_second() <= 0.0) {
        bandwidth->error(diags_, fmt::format("the offload bandwidth must be positive, got '{}'",
                                             bandwidth->describe()));
        b.reset();
      }
      if (b)
        sc.memory.offload_bandwidth = *b;
      else
        return;
    }
    if (os.policy == MemoryPolicy::None) return;
    // Offloading needs a host to offload to.
    if (comm.kind == CommunicationKind::FixedDelay) {
      if (!bandwidth) {
        policy_node->error(
            diags_, fmt::format("cannot offload: fixed-delay communication has no host; give "
                                "'memory.offload.bandwidth' (a private PCIe link per GPU, e.g. "
                                "25GB/s) or use a topology with a host vertex"));
      }
      return;
    }
    if (!comm.topology) return;  // the topology had errors (already reported)
    for (VertexId gpu : comm.placement) {
      if (!comm.topology->nearest_host(gpu)) {
        policy_node->error(
            diags_, fmt::format("cannot offload: no host vertex is reachable from GPU '{}' in the "
                                "topology; add a host linked to it (over PCIe) or set "
                                "'policy: none'",
                                comm.topology->vertex_name(gpu)));
        return;
      }
    }
  }

  std::optional<ParamValue> read_param(const YamlNode& n, const ParamSpec& spec) {
    constexpr auto lo = std::numeric_limits<std::int64_t>::min();
    constexpr auto hi = std::numeric_limits<std::int64_t>::max();
    std::optional<ParamValue> v;
    switch (spec.type) {
      case ParamType::Integer:
        if (auto x = n.as_integer(diags_, lo, hi)) v = *x;
        break;
      case ParamType::Real:
        if (auto x = n.as_real(diags_, -std::numeric_limits<double>::max(),
                               std::numeric_limits<double>::max()))
          v = *x;
        break;
      case ParamType::Boolean:
        if (auto x = n.as_boolean(diags_)) v = *x;
        break;
      case ParamType::Choice:
        if (auto x = n.as_choice(diags_, spec.choices)) v = *x;
        break;
      case ParamType::Duration:
        if (auto x = n.as_time(diags_)) v = *x;
        break;
      case ParamType::Size:
        if (auto x = n.as_bytes(diags_)) v = *x;
        break;
      case ParamType::Text:
        if (auto x = n.as_string(diags_)) v = *x;
        break;
    }
    if (v && spec.check) {
      if (std::optional<std::string> problem = spec.check(*v)) {
        n.error(diags_, fmt::format("{} is not allowed: {}", n.describe(), *problem));
        return std::nullopt;
      }
    }
    return v;
  }

  void read_schedule(const YamlNode& entry, Scenario& sc) {
    std::optional<YamlNode> name_node;
    std::optional<YamlNode> params_node;
    std::optional<MapReader> m;
    if (entry.is_map()) {
      m.emplace(entry, diags_, std::vector<std::string>{"name", "params"});
      name_node = m->require("name");
      params_node = m->get("params");
    } else if (entry.is_scalar() && !entry.is_null()) {
      name_node = entry;
    } else {
      entry.error(diags_,
                  fmt::format("expected a schedule name or {{name: ..., params: {{...}}}}, got {}",
                              entry.describe()));
      return;
    }
    if (!name_node) return;
    std::optional<std::string> name = name_node->as_string(diags_);
    if (!name) return;
    const Generator* gen = registry_.find(*name);
    if (!gen) {
      name_node->error(diags_, registry_.unknown_name_message(*name));
      return;
    }
    ScheduleRequest req;
    req.name = *name;
    req.where = entry.location();
    std::vector<std::string> spec_names;
    for (const ParamSpec& spec : gen->info.params) spec_names.push_back(spec.name);
    bool ok = true;
    std::optional<MapReader> params;
    if (params_node && !params_node->is_null()) {
      params.emplace(*params_node, diags_, spec_names);
      params->set_key_noun("parameter");
      ok = params_node->is_map();
    }
    for (const ParamSpec& spec : gen->info.params) {
      std::optional<YamlNode> given =
          params && params_node->is_map() ? params->get(spec.name) : std::nullopt;
      if (given) {
        if (auto v = read_param(*given, spec))
          req.params.set(spec.name, *v);
        else
          ok = false;
      } else if (!spec.optional_default) {
        req.params.set(spec.name, spec.default_value);
      }
    }
    if (ok) sc.schedules.push_back(std::move(req));
  }

  void read_schedules(MapReader& top, Scenario& sc) {
    std::optional<YamlNode> node = top.get("schedules");
    if (!node) {
      sc.schedules_defaulted = true;
      for (const std::string& name : registry_.names()) {
        if (name == "from-file") continue;  // needs a file: runs only when named
        const Generator* gen = registry_.find(name);
        ScheduleRequest req;
        req.name = name;
        req.params = ParamValues::defaults(gen->info.params);
        sc.schedules.push_back(std::move(req));
      }
      return;
    }
    if (node->is_scalar() && !node->is_null()) {
      read_schedule(*node, sc);  // a single name is accepted as a one-entry list
      return;
    }
    if (!node->is_sequence()) {
      node->error(diags_, fmt::format("expected a list of schedules, got {}", node->describe()));
      return;
    }
    std::vector<YamlNode> entries = node->elements();
    if (entries.empty()) {
      node->error(diags_, fmt::format("expected at least one schedule (known: {})",
                                      join_list(registry_.names())));
      return;
    }
    for (const YamlNode& e : entries) read_schedule(e, sc);
  }

  nlohmann::json resolved_json(const Scenario& sc) const {
    nlohmann::json j;
    j["name"] = sc.name;
    if (!description_.empty()) j["description"] = description_;
    j["pipeline"] = {{"stages", sc.stages}, {"microbatches", sc.microbatches}};

    nlohmann::json costs;
    auto times = [&](const char* key, Time StageCost::*field) {
      nlohmann::json a = nlohmann::json::array();
      for (const StageCost& s : sc.costs.stages) a.push_back((s.*field).seconds());
      costs[key] = a;
    };
    auto sizes = [&](const char* key, Bytes StageCost::*field) {
      nlohmann::json a = nlohmann::json::array();
      for (const StageCost& s : sc.costs.stages) a.push_back((s.*field).count());
      costs[key] = a;
    };
    costs["source"] = costs_source_;
    times("forward_s", &StageCost::forward);
    times("backward_input_s", &StageCost::backward_input);
    times("backward_weight_s", &StageCost::backward_weight);
    times("recompute_s", &StageCost::recompute);
    times("fused_forward_backward_s", &StageCost::fused);
    sizes("activation_memory_bytes", &StageCost::activation);
    sizes("weight_grad_memory_bytes", &StageCost::weight_grad);
    sizes("stage_input_memory_bytes", &StageCost::stage_input);
    sizes("p2p_bytes", &StageCost::p2p);
    sizes("static_memory_bytes", &StageCost::static_memory);
    j["costs"] = costs;

    if (sc.model) {
      const TransformerModel& m = *sc.model;
      j["model"] = {{"layers", m.layers},
                    {"hidden", m.hidden},
                    {"heads", m.heads},
                    {"seq_len", m.seq_len},
                    {"micro_batch_size", m.micro_batch_size},
                    {"vocab", m.vocab},
                    {"dtype", m.dtype}};
    }
    if (sc.gpu) {
      nlohmann::json g = {{"flops", sc.gpu->flops.flops_per_second()},
                          {"efficiency", sc.gpu->efficiency}};
      if (sc.gpu->memory) g["memory_bytes"] = sc.gpu->memory->count();
      j["cluster"] = {{"gpu", g}};
    }

    const CommunicationSpec& c = sc.communication;
    if (c.kind == CommunicationKind::FixedDelay) {
      j["communication"] = {{"model", "fixed-delay"}, {"delay_s", c.delay.seconds()}};
    } else {
      nlohmann::json t = {{"model", "topology"}};
      if (c.topology) {
        t["vertices"] = c.topology->vertex_count();
        t["links"] = c.topology->link_count();
        nlohmann::json placement = nlohmann::json::array();
        for (VertexId v : c.placement) placement.push_back(c.topology->vertex_name(v));
        t["placement"] = placement;
      }
      j["communication"] = t;
    }

    nlohmann::json budget = nlohmann::json::array();
    if (sc.memory.budget.size() == 1) {
      for (std::int32_t i = 0; i < sc.stages; ++i) budget.push_back(sc.memory.budget[0].count());
    } else {
      for (Bytes b : sc.memory.budget) budget.push_back(b.count());
    }
    const MemorySpec& mem = sc.memory;
    nlohmann::json offload = {
        {"policy", memory_policy_name(mem.offload.policy)},
        {"prefetch", mem.offload.prefetch},
        {"stages", mem.offload.stages},
        {"min_idle_s", mem.offload.min_idle.seconds()},
        {"bandwidth_bytes_per_s", mem.offload_bandwidth
                                      ? nlohmann::json(mem.offload_bandwidth->bytes_per_second())
                                      : nlohmann::json(nullptr)}};
    nlohmann::json recompute = {{"policy", memory_policy_name(mem.recompute.policy)},
                                {"stages", mem.recompute.stages}};
    if (mem.recompute.policy == MemoryPolicy::Selective && mem.recompute.stages.empty()) {
      recompute["fraction"] = mem.recompute.fraction;
    }
    if (sc.parallelism.enabled) {
      const ParallelismSpec& par = sc.parallelism;
      j["parallelism"] = {{"dp", par.dp},
                          {"tp", par.tp},
                          {"order", par.order},
                          {"bucket_bytes", par.bucket.count()},
                          {"overlap", par.overlap},
                          {"algorithm", std::string(collective_algorithm_name(par.algorithm))},
                          {"replica_sync", par.replica_sync}};
    }
    j["memory"] = {
        {"budget_bytes", sc.memory.budget.empty() ? nlohmann::json(nullptr) : budget},
        {"host_capacity_bytes",
         mem.host_capacity ? nlohmann::json(mem.host_capacity->count()) : nlohmann::json(nullptr)},
        {"release", mem.release == ReleaseConvention::Split ? "split" : "backward-complete"},
        {"offload", offload},
        {"recompute", recompute}};

    nlohmann::json schedules = nlohmann::json::array();
    for (const ScheduleRequest& r : sc.schedules) {
      nlohmann::json params = nlohmann::json::object();
      for (const auto& [key, value] : r.params.all()) params[key] = param_json(value);
      schedules.push_back({{"name", r.name}, {"params", params}});
    }
    j["schedules"] = schedules;
    if (sc.faults.any()) {
      nlohmann::json links = nlohmann::json::array();
      for (const LinkFaultSpec& l : sc.faults.links) {
        links.push_back(
            {{"between", {l.a, l.b}},
             {"at_s", l.at.seconds()},
             {"bandwidth_bytes_per_s",
              l.bandwidth ? nlohmann::json(l.bandwidth->bytes_per_second()) : nlohmann::json(0.0)},
             {"cut", !l.bandwidth.has_value()}});
      }
      j["faults"] = {{"slowdown", sc.faults.slowdown}, {"links", links}};
    }
    return j;
  }

  const Registry& registry_;
  std::string base_dir_;
  DiagnosticList diags_;
  std::string description_;
  std::string costs_source_;
  std::optional<YamlNode> pipeline_node_;
  std::optional<YamlNode> model_node_;
  std::optional<YamlNode> cluster_node_;
  bool model_ok_ = false;
  bool gpu_ok_ = false;
  ParallelCostInputs
      parallel_inputs_;  // costs.gradient_bytes / optimizer_step (docs/parallelism.md)
};

}  // namespace

std::string scenario_base_dir(const std::string& path) {
  std::filesystem::path parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

Scenario load_scenario_file(const std::string& path, const Registry& registry) {
  Loader loader(registry, scenario_base_dir(path));
  YamlDocument doc = YamlDocument::load_file(path, loader.diags());
  Scenario sc = loader.load(doc);
  sc.file = path;
  return sc;
}

Scenario load_scenario_string(const std::string& yaml, const std::string& name,
                              const Registry& registry) {
  return load_scenario_string(yaml, name, ".", registry);
}

Scenario load_scenario_string(const std::string& yaml, const std::string& name,
                              const std::string& base_dir, const Registry& registry) {
  Loader loader(registry, base_dir);
  YamlDocument doc = YamlDocument::load_string(yaml, name, loader.diags());
  Scenario sc = loader.load(doc);
  sc.file = name;
  return sc;
}

}  // namespace bubblesim
