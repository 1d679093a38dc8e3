#pragma once
// CollectiveLauncher: starts collectives that run together, each over its own ranks (a gradient
// bucket's all-reduce on every tensor-parallel rank of every holder of a stage), and says when
// each one ends. It is how an engine component runs collectives, whatever the network does with
// their flows:
//
//   one by one   (no ShapePort) each collective is planned for its bytes (collective_plan.h:
//                the scenario's algorithm or NCCL's choice, laid out over every NIC) and is a
//                CollectiveInstance that adds its flows step by step through the FlowPort
//   by class     (a ShapePort, sim/engine/symmetry/shape_port.h) the launch's first collective is
//                planned for its bytes; the flows of the set are laid out with that algorithm
//                once per key, at one byte, and each launch starts them scaled by its bytes: the
//                network solves one representative per class of flows (class_flows.h). Steps
//                are the same barriers: a collective's next step starts when every flow of its
//                step has arrived; collectives that finish a step at the same instant start the
//                next one together (a zero-delay timer gathers them), so their flows stay one
//                shape. `ring_steps: stepped` is the pipelined step cut into its `latencies`
//                barrier steps (collectives.h: a pipelined ring transfer stands for that many
//                steps), so a ring of 4096 ranks is one step of 4096 flows laid out once, not
//                8190 of them. Under NCCL's tuning model every collective of the launch takes the
//                first one's ModelTiming (its bandwidth floor and latency): the set is symmetric.
//
// The caller hands every token its port returns for it to on_token (its own tokens are below
// kStepBit).

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "sim/engine/collective_plan.h"
#include "sim/engine/collectives.h"
#include "sim/engine/symmetry/shape_port.h"

namespace bubblesim {

/// One collective of a launch: its algorithm forced, or (nullopt) the planner's options'
/// (`data_parallel.algorithm`, NCCL's choice under `auto`).
struct CollectiveSpec {
  std::vector<VertexId> ranks;
  CollectiveKind kind = CollectiveKind::AllReduce;
  std::optional<CollectiveAlgorithm> algorithm;
};

class CollectiveLauncher {
 public:
  /// Tokens at or above this bit are the launcher's own timers; every token it hands out stays
  /// below 2 kStepBit (the bits above belong to its owner: GradientSync::kFirstCallerBit).
  static constexpr std::uint32_t kStepBit = 0x10000000u;
  using Specs = std::function<std::vector<CollectiveSpec>()>;

  /// `planner`: plans every collective (its topology is the network's). `shapes`: null to add
  /// flows one by one. `keep_slices`: keep each collective's links per step (traces).
  CollectiveLauncher(const CollectivePlanner& planner, FlowPort& port, ShapePort* shapes,
                     bool keep_slices);
  ~CollectiveLauncher();
  CollectiveLauncher(const CollectiveLauncher&) = delete;
  CollectiveLauncher& operator=(const CollectiveLauncher&) = delete;

  /// Starts the collectives `specs` gives, together, each of `bytes` (the full buffer per rank).
  /// `key` names the set: every launch with one key must have the same specs (only the bytes may
  /// differ), which are asked for only when the key is new (one by one: at every launch). Returns
  /// the id of the first collective; the others have the next ids. The ids of collectives done
  /// at once (one rank) are appended to `done`.
  std::uint32_t launch(std::uint64_t key, double bytes, Time now, const Specs& specs,
                       std::vector<std::uint32_t>& done);
  /// A token from the port: appends the collectives that ended now to `done`.
  void on_token(std::uint32_t token, Time now, std::vector<std::uint32_t>& done);

  Time start_time(std::uint32_t id) const { return state_[id].start; }
  Time end_time(std::uint32_t id) const { return state_[id].end; }
  /// The links of each step with the step's start and end (empty unless keep_slices).
  const std::vector<CollectiveLinkSlice>& link_slices(std::uint32_t id) const {
    return state_[id].slices;
  }
  /// What it ran (plan_name: "ring", "tree/LL128") and its predicted time (NCCL's, or the
  /// alpha-beta closed form).
  const std::string& algorithm(std::uint32_t id) const { return state_[id].algorithm; }
  Time predicted(std::uint32_t id) const { return state_[id].predicted; }
  bool by_class() const { return shapes_ != nullptr; }

 private:
  struct Content;  // one step of one collective, laid out
  struct Group;    // the collectives of one key, laid out
  struct State {   // one launched collective
    Time start, end, step_start;
    std::int32_t group = -1;            // by class
    std::int32_t member = 0;            // its index in the group
    std::size_t step = 0;               // into its steps
    std::int32_t repeat = 0;            // of that step, done so far
    std::int32_t waiting = 0;           // tokens of the step still to come
    std::uint32_t first = 0;            // id of the launch's first collective
    std::optional<ModelTiming> timing;  // NCCL's floor and latency (by class)
    bool in_latency = false;            // its bytes have arrived; NCCL's latency runs
    std::string algorithm;
    Time predicted;
    std::vector<CollectiveLinkSlice> slices;
  };

  /// The group of `key` run with `algorithm`, laid out (from specs_by_key_) for `layout_bytes`.
  std::int32_t group_of(std::uint64_t key, CollectiveAlgorithm algorithm, double layout_bytes);
  /// A token owned by collective `id`, firing at `at`.
  void add_timer(std::uint32_t id, Time at);
  /// Starts the current step of collectives `ids` (of one launch) together at `now`.
  void start_step(const std::vector<std::uint32_t>& ids, double bytes, Time now);
  void step_done(std::uint32_t id, Time now, std::vector<std::uint32_t>& done);
  const Route& route(VertexId a, VertexId b);

  const CollectivePlanner& planner_;
  const Topology& topology_;
  FlowPort& port_;
  ShapePort* shapes_;
  bool keep_slices_;
  std::vector<State> state_;
  std::vector<double> launch_bytes_;  // by the launch's first id (by class)
  // One by one: the instances in flight (null once done) and their routes.
  std::vector<std::unique_ptr<CollectiveInstance>> instances_;
  std::map<std::pair<VertexId, VertexId>, Route> routes_;
  // By class: the groups, the shapes' tokens and the collectives waiting for their next step.
  // The specs of each key (its first one planned at every launch) and the groups by (key,
  // algorithm): the algorithm NCCL picks may change with the bytes.
  std::unordered_map<std::uint64_t, std::vector<CollectiveSpec>> specs_by_key_;
  std::map<std::pair<std::uint64_t, int>, std::int32_t> group_by_key_;
  std::vector<std::unique_ptr<Group>> groups_;
  std::vector<std::uint32_t> token_owner_;  // token -> collective id
  std::vector<std::uint32_t> next_step_;    // collectives to start their next step now
  bool step_timer_ = false;
};

}  // namespace bubblesim
