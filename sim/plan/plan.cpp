#include "sim/plan/plan.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "sim/costmodel/data_parallel_engine.h"
#include "sim/plan/plan_enumerate.h"
#include "sim/plan/plan_estimate.h"
#include "sim/plan/plan_replay.h"
#include "sim/scenario/scenario_loader.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Runs work(i) for i < n on `jobs` threads; the calling thread reports progress(done) every
// quarter second. The first exception a worker throws is rethrown once all have stopped.
template <typename Work, typename Report>
void parallel_for(std::size_t n, int jobs, Work work, Report report) {
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex mutex;
  std::condition_variable finished;
  std::exception_ptr error;
  auto worker = [&] {
    for (std::size_t i = next++; i < n; i = next++) {
      try {
        work(i);
      } catch (...) {
        std::lock_guard lock(mutex);
        if (!error) error = std::current_exception();
        next = n;
      }
      ++done;
      finished.notify_all();
    }
  };
  std::vector<std::thread> threads;
  const int count = std::max(1, std::min<int>(jobs, static_cast<int>(std::max<std::size_t>(n, 1))));
  for (int j = 0; j < count; ++j) threads.emplace_back(worker);
  {
    std::unique_lock lock(mutex);
    while (done < n && !error) {
      finished.wait_for(lock, std::chrono::milliseconds(250));
      report(done.load());
    }
  }
  for (std::thread& t : threads) t.join();
  if (error) std::rethrow_exception(error);
}

// The knobs that vary inside a family, as the label names them ("mbs1 full").
std::string variant_of(const PlanCandidate& c,
                       const std::vector<std::vector<std::string>>& search) {
  std::vector<std::string> parts;
  for (std::size_t i = 0; i < plan_axes().size(); ++i) {
    const PlanAxis& a = plan_axes()[i];
    if (a.stage != AxisStage::Load && a.stage != AxisStage::Bucket) continue;
    if (c.values[i].empty() || (!a.always_labelled && search[i].size() < 2)) continue;
    parts.push_back(a.label(c.values[i]));
  }
  return fmt::format("{}", fmt::join(parts, " "));
}

// The scenario of one candidate alone: its schedule and bucket.
std::string alone(const PlanSpec& spec, const PlanCandidate& c) {
  std::vector<std::string> values = c.values;
  const auto s = static_cast<std::size_t>(plan_axis_index("schedules"));
  const auto b = static_cast<std::size_t>(plan_axis_index("bucket"));
  const std::string schedule = values[s], bucket = values[b];
  values[s].clear();
  values[b].clear();
  return candidate_scenario(spec, values, c.degrees, {schedule}, bucket);
}

// One load unit's estimates, written into its candidates.
void estimate_unit(const PlanSpec& spec, const Registry& registry, const PlanLoadUnit& unit,
                   std::vector<PlanCandidate>& candidates) {
  auto reject_all = [&](PlanRejection why, const std::string& reason) {
    for (const auto& per_bucket : unit.candidate)
      for (std::size_t i : per_bucket) {
        candidates[i].rejection = why;
        candidates[i].reason = reason;
      }
  };
  Scenario sc;
  ResolvedScenario resolved;
  try {
    sc = load_scenario_string(
        candidate_scenario(spec, unit.values, unit.degrees, unit.schedules, ""), spec.file,
        spec.base_dir, registry);
    resolved = resolve(sc);
  } catch (const InputError& e) {
    const Diagnostic& d = e.diagnostics().front();
    reject_all(PlanRejection::Invalid,
               d.key_path.empty() ? d.message : d.key_path + ": " + d.message);
    return;
  }
  const SyncEstimator sync(resolved);
  // A layout without a bucket of its own takes the data-parallel engine's default, as the run does.
  const ParallelismSpec& par = sc.parallelism;
  const Bytes engine_bucket = par.data_parallel.bucket.value_or(
      Bytes(default_bucket_bytes(par.data_parallel.semantics, par.gradient_group())));
  std::vector<double> buckets;
  for (const std::string& b : unit.buckets) {
    DiagnosticList ignored;
    const std::optional<Bytes> bytes =
        b.empty() ? std::optional<Bytes>(engine_bucket)
                  : YamlNode(YAML::Node(b), spec.file, "search.bucket").as_bytes(ignored);
    buckets.push_back(bytes ? bytes->as_double() : engine_bucket.as_double());
  }
  for (std::size_t s = 0; s < sc.schedules.size() && s < unit.candidate.size(); ++s) {
    const ScheduleRequest& request = sc.schedules[s];
    const Generator* generator = registry.find(request.name);
    if (generator == nullptr) continue;  // the load refused unknown names
    const std::string label = schedule_label(*generator, request.params);
    const ScheduleEstimate e = estimate_schedule(resolved, *generator, request, sync, buckets);
    for (std::size_t b = 0; b < unit.candidate[s].size(); ++b) {
      PlanCandidate& c = candidates[unit.candidate[s][b]];
      c.schedule = label;
      if (e.rejection != PlanRejection::None) {
        c.rejection = e.rejection;
        c.reason = e.reason;
        c.over_budget_bytes = e.over_budget_bytes;
      } else {
        c.estimate = e.per_bucket[b];
      }
    }
  }
}

// The replays: the best estimates, at most `per_family` per parallel layout.
std::vector<std::size_t> choose_replays(const PlanResult& r, const PlanOptions& options,
                                        std::vector<std::size_t>& by_estimate) {
  for (std::size_t i = 0; i < r.candidates.size(); ++i)
    if (r.candidates[i].estimate) by_estimate.push_back(i);
  std::sort(by_estimate.begin(), by_estimate.end(), [&](std::size_t a, std::size_t b) {
    const PlanCandidate &x = r.candidates[a], &y = r.candidates[b];
    if (x.estimate->iteration_s != y.estimate->iteration_s)
      return x.estimate->iteration_s < y.estimate->iteration_s;
    return x.label < y.label;
  });
  std::map<std::string, std::int64_t> per_family;
  std::vector<std::size_t> chosen;
  for (std::size_t i : by_estimate) {
    if (static_cast<std::int64_t>(chosen.size()) >= options.replays) break;
    if (per_family[r.candidates[i].family]++ >= options.per_family) continue;
    chosen.push_back(i);
  }
  return chosen;
}

// Spearman's rho of two orders of the same items (ranks 0..n-1, no ties).
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  const std::size_t n = a.size();
  if (n < 2) return 1.0;
  auto ranks = [n](const std::vector<double>& v) {
    std::vector<std::size_t> idx(n);
    for (std::size_t i = 0; i < n; ++i) idx[i] = i;
    std::stable_sort(idx.begin(), idx.end(),
                     [&](std::size_t x, std::size_t y) { return v[x] < v[y]; });
    std::vector<double> r(n);
    for (std::size_t i = 0; i < n; ++i) r[idx[i]] = static_cast<double>(i);
    return r;
  };
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  double d2 = 0;
  for (std::size_t i = 0; i < n; ++i) d2 += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  const double nn = static_cast<double>(n);
  return 1.0 - 6.0 * d2 / (nn * (nn * nn - 1.0));
}

void summarise(PlanResult& r, const std::vector<std::size_t>& by_estimate,
               const PlanOptions& options) {
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const PlanCandidate& c = r.candidates[i];
    if (!c.replay) continue;
    (c.replay->status == "ok" ? r.ranked : r.failed).push_back(i);
  }
  std::sort(r.ranked.begin(), r.ranked.end(), [&](std::size_t a, std::size_t b) {
    const double x = r.candidates[a].replay->iteration_s, y = r.candidates[b].replay->iteration_s;
    return x != y ? x < y : r.candidates[a].label < r.candidates[b].label;
  });
  for (std::size_t i : by_estimate) {
    if (static_cast<std::int64_t>(r.estimated_only.size()) >= options.estimated_shown) break;
    if (!r.candidates[i].replay) r.estimated_only.push_back(i);
  }
  std::vector<double> est, rep, err;
  for (std::size_t i : r.ranked) {
    const PlanCandidate& c = r.candidates[i];
    est.push_back(c.estimate->iteration_s);
    rep.push_back(c.replay->iteration_s);
    err.push_back(std::fabs(est.back() - rep.back()) / rep.back());
  }
  r.agreement.samples = static_cast<std::int64_t>(err.size());
  if (!err.empty()) {
    std::vector<double> sorted = err;
    std::sort(sorted.begin(), sorted.end());
    const std::size_t n = sorted.size();
    r.agreement.median_abs_error =
        n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    r.agreement.max_abs_error = sorted.back();
    r.agreement.rank_correlation = spearman(est, rep);
  }
  // Families without a single estimated candidate, with the reason of the nearest one.
  std::map<std::string, std::size_t> index;
  std::vector<std::vector<std::size_t>> members;
  std::vector<std::string> order;
  for (std::size_t i = 0; i < r.candidates.size(); ++i) {
    const std::string& f = r.candidates[i].family;
    if (index.emplace(f, members.size()).second) {
      members.emplace_back();
      order.push_back(f);
    }
    members[index[f]].push_back(i);
  }
  for (std::size_t k = 0; k < order.size(); ++k) {
    const std::vector<std::size_t>& m = members[k];
    if (std::any_of(m.begin(), m.end(), [&](std::size_t i) {
          return r.candidates[i].rejection == PlanRejection::None;
        }))
      continue;
    std::map<PlanRejection, std::int64_t> count;
    for (std::size_t i : m) ++count[r.candidates[i].rejection];
    PlanRejection why = count.begin()->first;
    for (const auto& [kind, n] : count)
      if (n > count[why]) why = kind;
    if (count.count(PlanRejection::Memory) > 0) why = PlanRejection::Memory;  // the nearest to fit
    std::size_t best = m.front();
    for (std::size_t i : m) {
      const PlanCandidate& c = r.candidates[i];
      if (c.rejection != why) continue;
      const PlanCandidate& b = r.candidates[best];
      if (b.rejection != why ||
          (why == PlanRejection::Memory && c.over_budget_bytes < b.over_budget_bytes))
        best = i;
    }
    r.rejected_families.push_back(
        {order[k], why, r.candidates[best].reason, static_cast<std::int64_t>(m.size())});
  }
}

}  // namespace

std::string_view plan_rejection_name(PlanRejection r) {
  switch (r) {
    case PlanRejection::None:
      return "none";
    case PlanRejection::Divisibility:
      return "divisibility";
    case PlanRejection::Memory:
      return "memory";
    case PlanRejection::Infeasible:
      return "infeasible";
    case PlanRejection::Invalid:
      return "invalid";
    case PlanRejection::NotEvaluated:
      return "time budget";
  }
  return "none";
}

PlanResult run_plan(const PlanSpec& spec, const Registry& registry, const PlanOptions& options) {
  const auto started = Clock::now();
  auto say = [&](const std::string& s) {
    if (options.progress) options.progress(s);
  };
  const int jobs = options.jobs > 0
                       ? options.jobs
                       : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const double budget = options.time_budget_s > 0 ? options.time_budget_s : 1e300;
  PlanResult result;
  result.job.name = spec.name;
  result.job.file = spec.file;
  say("reading the job");
  const PlanJob job = read_plan_job(spec, registry);
  result.job.gpus = job.context.gpus;
  result.job.gpus_per_node = job.context.gpus_per_node;
  result.job.global_batch = job.context.global_batch;
  result.job.seq_len = job.context.seq_len;
  result.job.model = job.model;
  result.job.gpu = job.gpu;
  result.search = searched_values(spec, job);
  const std::vector<PlanLoadUnit> units = enumerate_candidates(spec, job, result.search, result);
  result.times.enumerate_s = since(started);

  // 2. Estimate: most of the budget, so that the replays of the best keep the rest.
  const auto estimating = Clock::now();
  std::atomic<std::int64_t> skipped{0};
  parallel_for(
      units.size(), jobs,
      [&](std::size_t i) {
        if (since(started) > 0.7 * budget) {
          ++skipped;
          for (const auto& per_bucket : units[i].candidate)
            for (std::size_t c : per_bucket) {
              result.candidates[c].rejection = PlanRejection::NotEvaluated;
              result.candidates[c].reason = "not estimated: the time budget ran out";
            }
          return;
        }
        estimate_unit(spec, registry, units[i], result.candidates);
      },
      [&](std::size_t done) { say(fmt::format("estimate: {}/{} scenarios", done, units.size())); });
  result.loads = static_cast<std::int64_t>(units.size()) - skipped;
  if (skipped > 0) {
    result.time_budget_note = fmt::format(
        "the time budget ran out after estimating {} of {} scenarios", result.loads, units.size());
  }
  for (PlanCandidate& c : result.candidates) {
    c.variant = variant_of(c, result.search);
    c.label = c.family + " " + c.variant + " " + c.schedule;
  }
  result.times.estimate_s = since(estimating);

  // 3. Replay the best estimates, each alone.
  const auto replaying = Clock::now();
  std::vector<std::size_t> by_estimate;
  const std::vector<std::size_t> chosen = choose_replays(result, options, by_estimate);
  std::atomic<std::int64_t> not_replayed{0};
  parallel_for(
      chosen.size(), jobs,
      [&](std::size_t k) {
        PlanCandidate& c = result.candidates[chosen[k]];
        c.scenario_yaml = alone(spec, c);
        if (since(started) > budget) {
          ++not_replayed;
          return;
        }
        c.replay = replay_candidate(c.scenario_yaml, spec.file, spec.base_dir, registry);
      },
      [&](std::size_t done) { say(fmt::format("replay: {}/{} layouts", done, chosen.size())); });
  if (not_replayed > 0) {
    result.time_budget_note += fmt::format("{}the time budget left {} of {} replays undone",
                                           result.time_budget_note.empty() ? "" : "; ",
                                           not_replayed.load(), chosen.size());
  }
  result.times.replay_s = since(replaying);
  summarise(result, by_estimate, options);
  result.times.total_s = since(started);
  return result;
}

}  // namespace bubblesim
