#include "schedules/validator.h"

#include <fmt/format.h>

#include "schedules/list_scheduling.h"
#include "schedules/table_index.h"

namespace bubblesim {
namespace {

constexpr std::size_t kMaxReported = 50;  // per table; the rest are counted

class ProblemList {
 public:
  template <typename... Args>
  void add(fmt::format_string<Args...> f, Args&&... args) {
    if (items_.size() < kMaxReported) items_.push_back(fmt::format(f, std::forward<Args>(args)...));
    ++total_;
  }
  std::vector<std::string> finish() && {
    if (total_ > items_.size())
      items_.push_back(fmt::format("... and {} more problems", total_ - items_.size()));
    return std::move(items_);
  }
  bool empty() const { return total_ == 0; }

 private:
  std::vector<std::string> items_;
  std::size_t total_ = 0;
};

std::string label(OpKind kind, std::int32_t s, std::int32_t j) {
  return fmt::format("{}{}.{}", op_kind_letter(kind), s, j);
}

void check_shape(const Table& t, ProblemList& problems) {
  if (t.devices <= 0) problems.add("the table has {} devices; it needs at least 1", t.devices);
  if (t.stages <= 0) problems.add("the table has {} stages; it needs at least 1", t.stages);
  if (t.microbatches <= 0)
    problems.add("the table has {} microbatches; it needs at least 1", t.microbatches);
  if (t.chunks <= 0)
    problems.add("the table has {} chunks per stage; it needs at least 1", t.chunks);
  if (static_cast<std::int64_t>(t.device_ops.size()) != t.devices) {
    problems.add("the table lists ops for {} devices but declares {}", t.device_ops.size(),
                 t.devices);
  }
}

void check_placement(const Table& t, ProblemList& problems) {
  const Placement& p = t.placement;
  if (p.device_of_stage.empty()) {
    problems.add("the placement has no replica: every stage needs a device");
    return;
  }
  for (std::size_t r = 0; r < p.device_of_stage.size(); ++r) {
    const auto& map = p.device_of_stage[r];
    if (static_cast<std::int64_t>(map.size()) != t.stages) {
      problems.add("replica {} places {} stages but the table has {}", r, map.size(), t.stages);
      continue;
    }
    for (std::size_t s = 0; s < map.size(); ++s) {
      if (map[s] < 0 || map[s] >= t.devices) {
        problems.add("stage {} is placed on device {}, which does not exist (devices 0..{})", s,
                     map[s], t.devices - 1);
      }
    }
  }
  if (!p.replica_of_microbatch.empty()) {
    if (static_cast<std::int64_t>(p.replica_of_microbatch.size()) != t.microbatches) {
      problems.add("the placement assigns {} microbatches to replicas but the table has {}",
                   p.replica_of_microbatch.size(), t.microbatches);
    }
    for (std::size_t j = 0; j < p.replica_of_microbatch.size(); ++j) {
      std::int32_t r = p.replica_of_microbatch[j];
      if (r < 0 || r >= p.replicas())
        problems.add("microbatch {} uses replica {}, which does not exist", j, r);
    }
  }
}

bool placement_usable(const Table& t) {
  const Placement& p = t.placement;
  if (p.device_of_stage.empty()) return false;
  for (const auto& map : p.device_of_stage) {
    if (static_cast<std::int64_t>(map.size()) != t.stages) return false;
    for (std::int32_t d : map)
      if (d < 0 || d >= t.devices) return false;
  }
  if (!p.replica_of_microbatch.empty()) {
    if (static_cast<std::int64_t>(p.replica_of_microbatch.size()) != t.microbatches) return false;
    for (std::int32_t r : p.replica_of_microbatch)
      if (r < 0 || r >= p.replicas()) return false;
  }
  return true;
}

void check_ops_in_range(const Table& t, bool placement_ok, ProblemList& problems) {
  auto check_half = [&](std::size_t d, std::size_t i, const Op& op, OpKind kind, std::int32_t s,
                        std::int32_t j) {
    if (s < 0 || s >= t.stages || j < 0 || j >= t.microbatches) {
      problems.add("device {} position {}: {} is out of range (stages 0..{}, microbatches 0..{})",
                   d, i, to_string(op), t.stages - 1, t.microbatches - 1);
      return;
    }
    if (placement_ok) {
      std::int32_t want = t.placement.device_of(s, j);
      if (want != static_cast<std::int32_t>(d)) {
        problems.add("device {} position {}: {} belongs on device {}, where stage {} is placed", d,
                     i, label(kind, s, j), want, s);
      }
    }
  };
  for (std::size_t d = 0; d < t.device_ops.size(); ++d) {
    for (std::size_t i = 0; i < t.device_ops[d].size(); ++i) {
      const Op& op = t.device_ops[d][i];
      if (op.kind == OpKind::ForwardBackward) {
        check_half(d, i, op, OpKind::Forward, op.stage, op.microbatch);
        check_half(d, i, op, OpKind::Backward, op.backward_stage, op.backward_microbatch);
      } else {
        check_half(d, i, op, op.kind, op.stage, op.microbatch);
      }
    }
  }
}

void check_completeness(const Table& t, const TableIndex& index, ProblemList& problems) {
  for (std::int32_t s = 0; s < t.stages; ++s) {
    for (std::int32_t j = 0; j < t.microbatches; ++j) {
      for (OpKind kind : {OpKind::Forward, OpKind::Backward}) {
        int n = index.count(kind, s, j);
        if (n == 0) problems.add("{} is missing", label(kind, s, j));
        if (n > 1) problems.add("{} appears {} times; it must appear once", label(kind, s, j), n);
      }
      for (OpKind kind : {OpKind::Weight, OpKind::Recompute, OpKind::Offload, OpKind::Reload}) {
        int n = index.count(kind, s, j);
        if (n > 1)
          problems.add("{} appears {} times; it may appear at most once", label(kind, s, j), n);
      }
      if (index.count(OpKind::Reload, s, j) > 0 && index.count(OpKind::Offload, s, j) == 0) {
        problems.add("{} reloads an activation that is never offloaded ({} is missing)",
                     label(OpKind::Reload, s, j), label(OpKind::Offload, s, j));
      }
    }
  }
}

// An op that must wait for another op listed later on the same device and stream can never start.
void check_same_device_order(const Table& t, const TableIndex& index, ProblemList& problems) {
  auto require_before = [&](OpKind before_kind, std::int32_t bs, std::int32_t bj, OpKind after_kind,
                            std::int32_t as, std::int32_t aj) {
    OpLocation a = index.find(before_kind, bs, bj);
    OpLocation b = index.find(after_kind, as, aj);
    if (!a.present() || !b.present() || a.device != b.device) return;
    const Op& oa =
        t.device_ops[static_cast<std::size_t>(a.device)][static_cast<std::size_t>(a.position)];
    const Op& ob =
        t.device_ops[static_cast<std::size_t>(b.device)][static_cast<std::size_t>(b.position)];
    if (stream_of(oa.kind) != stream_of(ob.kind)) return;
    if (a.position == b.position) {
      problems.add("device {}: the fused op {} depends on itself ({} needs {})", a.device,
                   to_string(oa), label(after_kind, as, aj), label(before_kind, bs, bj));
    } else if (a.position > b.position) {
      problems.add(
          "device {}: {} (position {}) is listed before {} (position {}), which it depends on",
          a.device, label(after_kind, as, aj), b.position, label(before_kind, bs, bj), a.position);
    }
  };
  // Every edge of the table's rules (list_scheduling.h), by consumer; an edge between two
  // streams (a copy and a compute op) is left to the engine, which runs the streams side by side.
  for (std::int32_t s = 0; s < t.stages; ++s) {
    for (std::int32_t j = 0; j < t.microbatches; ++j) {
      for (OpKind kind : {OpKind::Forward, OpKind::Backward, OpKind::Weight, OpKind::Recompute,
                          OpKind::Offload, OpKind::Reload}) {
        list_scheduling::for_each_producer(
            kind, s, j, t.stages,
            [&](OpKind producer, std::int32_t ps, std::int32_t pj,
                list_scheduling::DependencyKind) { require_before(producer, ps, pj, kind, s, j); });
      }
    }
  }
}

}  // namespace

std::vector<std::string> validate_table(const Table& table) {
  ProblemList problems;
  check_shape(table, problems);
  if (!problems.empty()) return std::move(problems).finish();
  check_placement(table, problems);
  check_ops_in_range(table, placement_usable(table), problems);
  TableIndex index(table);
  check_completeness(table, index, problems);
  check_same_device_order(table, index, problems);
  return std::move(problems).finish();
}

InvalidTableError::InvalidTableError(const std::string& table_name,
                                     std::vector<std::string> problems)
    : std::invalid_argument([&] {
        std::string msg =
            fmt::format("schedule '{}' is not a valid table ({} problem{}):", table_name,
                        problems.size(), problems.size() == 1 ? "" : "s");
        for (const auto& p : problems) msg += "\n  " + p;
        return msg;
      }()),
      problems_(std::move(problems)) {}

void require_valid_table(const Table& table, const std::string& table_name) {
  auto problems = validate_table(table);
  if (!problems.empty()) throw InvalidTableError(table_name, std::move(problems));
}

}  // namespace bubblesim
