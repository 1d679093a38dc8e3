// The constraints of the time-indexed MILP (milp_grid.h), on step variables S[v][t] (v started
// by step t): monotone steps, assignment and decision links, the strong form of every dependency,
// one op per stream and step, memory per device and step, the engine's list semantics (an op
// starts when the op before it ends or when its last input arrives, never later: no voluntary
// wait), and the objective.
#include <limits>

#include "schedules/optimizer/milp_grid_model.h"

namespace bubblesim::optimizer::grid {
namespace {

constexpr std::int64_t kBefore = std::numeric_limits<std::int32_t>::min();
constexpr std::int64_t kAfter = std::numeric_limits<std::int32_t>::max();

struct Pred {
  const Job* job;
  std::int64_t lag;  // steps from its start to the successor's earliest start
};

class Rows {
 public:
  Rows(const Model& m, const std::function<void(const Row&, char, double)>& emit)
      : model_(m), pr_(*m.problem), sink_(emit) {
    for (const Job& jb : model_.jobs) {
      if (!jb.present()) continue;
      const int engine = jb.kind == StepKind::O ? 1 : jb.kind == StepKind::L ? 2 : 0;
      on_device_[engine].resize(static_cast<std::size_t>(pr_.devices));
      on_device_[engine][static_cast<std::size_t>(jb.device)].push_back(&jb);
    }
    for (auto& e : on_device_) e.resize(static_cast<std::size_t>(pr_.devices));
  }

  void all() {
    steps();
    assignment();
    dependencies();
    streams();
    memory();
    list_semantics();
    objective();
  }

 private:
  const Job& job(StepKind k, int mode, std::int32_t s, std::int32_t j) const {
    return model_.job(k, mode, s, j);
  }
  std::int64_t dur(StepKind k, std::int32_t s) const { return model_.steps(pr_.duration(k, s)); }
  const std::vector<const Job*>& compute(std::int32_t d) const {
    return on_device_[0][static_cast<std::size_t>(d)];
  }

  /// S[t] >= S[t-1]; the device-wide indicators: some compute op ends / starts at step t.
  void steps() {
    for (const Job& jb : model_.jobs) {
      if (!jb.present()) continue;
      for (std::int64_t t = jb.first + 1; t <= jb.last; ++t) {
        Row r;
        r.add(jb.col(t), 1.0);
        r.add(jb.col(t - 1), -1.0);
        emit_(r, 'G', 0.0);
      }
    }
    for (std::int32_t d = 0; d < pr_.devices; ++d) {
      for (std::int64_t t = 0; t < model_.horizon; ++t) {
        Row ends, starts;
        ends.add(model_.ends_col[static_cast<std::size_t>(d)] + static_cast<int>(t), -1.0);
        starts.add(model_.starts_col[static_cast<std::size_t>(d)] + static_cast<int>(t), -1.0);
        for (const Job* w : compute(d)) {
          ends.ends_at(*w, t, 1.0);
          starts.starts_at(*w, t, 1.0);
        }
        emit_(ends, 'E', 0.0);
        emit_(starts, 'E', 0.0);
      }
    }
  }

  void assignment() {
    for (std::int32_t s = 0; s < pr_.stages; ++s) {
      for (std::int32_t j = 0; j < pr_.microbatches; ++j) {
        for (StepKind k : {StepKind::F, StepKind::B, StepKind::W}) {
          Row r;
          for (int mode : {0, 1}) r.started(job(k, mode, s, j), kAfter, 1.0);
          emit_(r, 'E', 1.0);
        }
        // Recomputed: F, B and R in mode 1 together; offloaded: O and L together, not recomputed.
        const Job& f1 = job(StepKind::F, 1, s, j);
        const Job& o = job(StepKind::O, 0, s, j);
        link(f1, job(StepKind::B, 1, s, j));
        link(f1, job(StepKind::R, 0, s, j));
        link(o, job(StepKind::L, 0, s, j));
        if (o.present() && f1.present()) {
          Row both;
          both.started(o, kAfter, 1.0);
          both.started(f1, kAfter, 1.0);
          emit_(both, 'L', 1.0);
        }
      }
    }
  }

  /// Both present or both absent.
  void link(const Job& a, const Job& b) {
    if (!a.present() && !b.present()) return;
    Row r;
    r.started(a, kAfter, 1.0);
    r.started(b, kAfter, -1.0);
    emit_(r, 'E', 0.0);
  }

  /// For every step t: the ops in `after` started by t only if the ops in `before` started by
  /// t - lag (the strong time-indexed form of a dependency).
  void precede(const std::vector<Pred>& before, const std::vector<const Job*>& after) {
    std::int64_t from = kAfter, to = kBefore, until = kBefore;
    for (const Job* a : after) {
      if (!a->present()) continue;
      from = std::min(from, a->first);
      to = std::max(to, a->last);
    }
    for (const Pred& b : before)
      if (b.job->present()) until = std::max(until, b.job->last + b.lag - 1);
    to = std::min(to, until);
    for (std::int64_t t = from; t <= to; ++t) {
      Row r;
      for (const Job* a : after) r.started(*a, t, 1.0);
      if (r.cols.empty()) continue;
      for (const Pred& b : before) r.started(*b.job, t - b.lag, -1.0);
      emit_(r, 'L', 0.0);
    }
  }

  void dependencies() {
    const std::int32_t S = pr_.stages, m = pr_.microbatches;
    for (std::int32_t s = 0; s < S; ++s) {
      for (std::int32_t j = 0; j < m; ++j) {
        const Job* f[2] = {&job(StepKind::F, 0, s, j), &job(StepKind::F, 1, s, j)};
        const Job* b[2] = {&job(StepKind::B, 0, s, j), &job(StepKind::B, 1, s, j)};
        const Job* w = &job(StepKind::W, 0, s, j);
        const std::int64_t tf = dur(StepKind::F, s), tb = dur(StepKind::B, s);
        if (s > 0) {
          const std::int64_t lag = dur(StepKind::F, s - 1) + model_.steps(pr_.forward_delay(s - 1));
          precede({{&job(StepKind::F, 0, s - 1, j), lag}, {&job(StepKind::F, 1, s - 1, j), lag}},
                  {f[0], f[1]});
        }
        if (j > 0) {
          precede({{&job(StepKind::F, 0, s, j - 1), tf}, {&job(StepKind::F, 1, s, j - 1), tf}},
                  {f[0], f[1]});
          precede({{&job(StepKind::B, 0, s, j - 1), tb}, {&job(StepKind::B, 1, s, j - 1), tb}},
                  {b[0], b[1]});
          precede({{&job(StepKind::W, 0, s, j - 1), dur(StepKind::W, s)}}, {w});
        }
        precede({{f[0], tf}, {f[1], tf}}, {b[0], b[1]});
        if (s + 1 < S) {
          const std::int64_t lag = dur(StepKind::B, s + 1) + model_.steps(pr_.backward_delay(s));
          precede({{&job(StepKind::B, 0, s + 1, j), lag}, {&job(StepKind::B, 1, s + 1, j), lag}},
                  {b[0], b[1]});
        }
        precede({{b[0], tb}, {b[1], tb}}, {w});
        const Job& r = job(StepKind::R, 0, s, j);
        if (r.present()) {
          precede({{f[1], tf}}, {&r});
          precede({{&r, dur(StepKind::R, s)}}, {b[1]});
        }
        const Job& o = job(StepKind::O, 0, s, j);
        const Job& l = job(StepKind::L, 0, s, j);
        if (o.present()) {
          precede({{f[0], tf}}, {&o});
          precede({{&o, dur(StepKind::O, s)}}, {&l});
          // The reload ends before its B (only when there is a reload).
          const std::int64_t tl = dur(StepKind::L, s);
          for (std::int64_t t = b[0]->first; t <= b[0]->last; ++t) {
            Row row;
            row.started(*b[0], t, 1.0);
            row.started(l, kAfter, 1.0);
            row.started(l, t - tl, -1.0);
            emit_(row, 'L', 1.0);
          }
        }
      }
    }
  }

  /// At most one op at a time on each device's compute stream and on each copy engine.
  void streams() {
    for (int engine = 0; engine < 3; ++engine) {
      for (std::int32_t d = 0; d < pr_.devices; ++d) {
        const auto& mine = on_device_[engine][static_cast<std::size_t>(d)];
        if (mine.size() < 2) continue;
        for (std::int64_t t = 0; t < model_.horizon; ++t) {
          Row r;
          for (const Job* jb : mine) {
            if (jb->steps <= 0) continue;
            r.started_between(*jb, t - jb->steps, t, 1.0);
          }
          if (r.cols.size() > 2) emit_(r, 'L', 1.0);
        }
      }
    }
  }

  /// Per device and step: allocations started by t minus releases ended by t (offloads: before t);
  /// where a reload can start at t, also the memory at its start, before t's compute events.
  void memory() {
    for (std::int32_t d = 0; d < pr_.devices; ++d) {
      const std::vector<std::int32_t> stages = pr_.stages_of(d);
      double unit = 1;
      for (std::int32_t s : stages)
        unit = std::max(
            unit, static_cast<double>(pr_.memory.activation_bytes[static_cast<std::size_t>(s)]));
      const double limit =
          static_cast<double>(pr_.memory.limit_bytes[static_cast<std::size_t>(d)]) / unit;
      for (std::int64_t t = 0; t < model_.horizon; ++t) {
        // r: after every event at t (compute releases before compute allocations, offloads ended
        // at t not yet freed). reload: the instant a reload starts at t, before the compute events
        // at t (the timing model's order: a reload's allocation first).
        Row r, reload;
        bool reload_at_t = false;
        double most = 0;  // the most the row's allocations can add up to
        for (std::int32_t s : stages) {
          const auto su = static_cast<std::size_t>(s);
          const double mb = static_cast<double>(pr_.memory.activation_bytes[su]) / unit;
          const double mw = static_cast<double>(pr_.memory.weight_grad_bytes[su]) / unit;
          const double in = static_cast<double>(pr_.memory_ops.stage_input_bytes.empty()
                                                    ? 0
                                                    : pr_.memory_ops.stage_input_bytes[su]) /
                            unit;
          for (std::int32_t j = 0; j < pr_.microbatches; ++j) {
            const Job& f0 = job(StepKind::F, 0, s, j);
            const Job& f1 = job(StepKind::F, 1, s, j);
            const bool started = (f0.present() && f0.first <= t) || (f1.present() && f1.first <= t);
            if (!started) continue;
            most += 2 * mb;
            r.started(f0, t, mb);
            r.started(f1, t, in);
            const Job& o = job(StepKind::O, 0, s, j);
            r.started(job(StepKind::R, 0, s, j), t, mb);
            r.started(job(StepKind::L, 0, s, j), t, mb);
            r.started(o, t - o.steps - 1, -mb);
            r.started(job(StepKind::B, 0, s, j), t - dur(StepKind::B, s), -(mb - mw));
            r.started(job(StepKind::B, 1, s, j), t - dur(StepKind::B, s), -(mb - mw + in));
            r.started(job(StepKind::W, 0, s, j), t - dur(StepKind::W, s), -mw);
            const Job& l = job(StepKind::L, 0, s, j);
            reload_at_t = reload_at_t || (l.present() && l.first <= t && t <= l.last);
            reload.started(f0, t - 1, mb);
            reload.started(f1, t - 1, in);
            reload.started(job(StepKind::R, 0, s, j), t - 1, mb);
            reload.started(l, t, mb);
            reload.started(o, t - o.steps - 1, -mb);
            reload.started(job(StepKind::B, 0, s, j), t - 1 - dur(StepKind::B, s), -(mb - mw));
            reload.started(job(StepKind::B, 1, s, j), t - 1 - dur(StepKind::B, s), -(mb - mw + in));
            reload.started(job(StepKind::W, 0, s, j), t - 1 - dur(StepKind::W, s), -mw);
          }
        }
        if (most <= limit + 1e-9 || r.cols.empty()) continue;
        emit_(r, 'L', limit);
        if (reload_at_t) emit_(reload, 'L', limit);
      }
    }
  }

  /// The engine runs each stream's ops in list order as soon as they can: an op starts at step t
  /// only when the stream's previous op ends at t or one of its inputs arrives at t. An R runs
  /// right before its B: no other compute op starts between them.
  void list_semantics() {
    const std::int32_t S = pr_.stages;
    for (const Job& v : model_.jobs) {
      if (!v.present() || v.first == v.last) continue;
      const auto du = static_cast<std::size_t>(v.device);
      const std::int32_t s = v.stage, j = v.microbatch;
      for (std::int64_t t = v.first; t <= v.last; ++t) {
        Row r;
        r.starts_at(v, t, 1.0);
        auto arrives = [&](const Job& u, std::int64_t delay) { r.ends_at(u, t - delay, -1.0); };
        switch (v.kind) {
          case StepKind::F:
            r.add(model_.ends_col[du] + static_cast<int>(t), -1.0);
            if (s > 0)
              for (int mode : {0, 1})
                arrives(job(StepKind::F, mode, s - 1, j), model_.steps(pr_.forward_delay(s - 1)));
            break;
          case StepKind::B:
            r.add(model_.ends_col[du] + static_cast<int>(t), -1.0);
            if (s + 1 < S)
              for (int mode : {0, 1})
                arrives(job(StepKind::B, mode, s + 1, j), model_.steps(pr_.backward_delay(s)));
            if (v.mode == 0) arrives(job(StepKind::L, 0, s, j), 0);
            break;
          case StepKind::W:
          case StepKind::R:
            r.add(model_.ends_col[du] + static_cast<int>(t), -1.0);
            break;
          case StepKind::O:
            arrives(job(StepKind::F, 0, s, j), 0);
            for (const Job* o : on_device_[1][du]) r.ends_at(*o, t, -1.0);
            break;
          case StepKind::L:
            r.add(model_.starts_col[du] + static_cast<int>(t), -1.0);
            arrives(job(StepKind::O, 0, s, j), 0);
            for (const Job* l : on_device_[2][du]) r.ends_at(*l, t, -1.0);
            break;
        }
        emit_(r, 'L', 0.0);
      }
      if (v.kind == StepKind::R) {
        const Job& b = job(StepKind::B, 1, s, j);
        for (std::int64_t t = v.first + v.steps; t <= b.last; ++t) {
          Row r;
          for (const Job* w : compute(v.device))
            if (w != &b) r.starts_at(*w, t, 1.0);
          r.started(v, t - v.steps, 1.0);
          r.started(b, t - 1, -1.0);
          emit_(r, 'L', 1.0);
        }
      }
    }
  }

  /// start(v) = last S[last] - sum_{t < last} S[t]; end = start + duration.
  void add_start(Row& r, const Job& v, double coef) const {
    if (!v.present()) return;
    r.add(v.col(v.last), coef * static_cast<double>(v.last));
    for (std::int64_t t = v.first; t < v.last; ++t) r.add(v.col(t), -coef);
  }

  /// z >= every device's cost (milp.h): its last W's end minus its first F's start (span), or
  /// the end (makespan, iteration with a global barrier), plus the work after its last op.
  void objective() {
    const bool from_first =
        pr_.objective == Objective::StageSpan ||
        (pr_.objective == Objective::Iteration && !pr_.iteration.global_barrier);
    const std::int32_t m = pr_.microbatches;
    for (std::int32_t d = 0; d < pr_.devices; ++d) {
      const std::vector<std::int32_t> mine = pr_.stages_of(d);
      const double post =
          pr_.objective == Objective::Iteration
              ? static_cast<double>(pr_.iteration_tail(d)) / static_cast<double>(model_.grid)
              : 0.0;
      for (std::int32_t s : mine) {
        Row r;
        r.add(model_.z, 1.0);
        const Job& w = job(StepKind::W, 0, s, m - 1);
        add_start(r, w, -1.0);
        if (from_first)
          for (int mode : {0, 1}) add_start(r, job(StepKind::F, mode, mine.front(), 0), 1.0);
        emit_(r, 'G', post + static_cast<double>(w.steps));
      }
    }
  }

  /// Emits `r` with its duplicate columns merged; a row with nothing left must hold as it is.
  void emit_(Row r, char sense, double rhs) {
    r.merge();
    if (r.cols.empty()) return;
    sink_(r, sense, rhs);
  }

  const Model& model_;
  const Problem& pr_;
  const std::function<void(const Row&, char, double)>& sink_;
  std::vector<std::vector<const Job*>> on_device_[3];  // compute, D2H, H2D jobs per device
};

}  // namespace

void add_rows(const Model& model, const std::function<void(const Row&, char, double)>& emit) {
  Rows(model, emit).all();
}

}  // namespace bubblesim::optimizer::grid
