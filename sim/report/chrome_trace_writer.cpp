#include "sim/report/chrome_trace_writer.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

namespace bubblesim {
namespace {

std::string json_string(std::string_view s) { return nlohmann::json(std::string(s)).dump(); }

// Thread sort indices inside a GPU process: compute first, then the copy engines, then sends.
constexpr int kComputeOrder = 0;
constexpr int kD2hOrder = 1;
constexpr int kH2dOrder = 2;
constexpr int kSendOrder = 3;
constexpr int kPhaseOrder = 5;  // after the sync thread (kSendOrder + 1)

struct Slice {
  std::int64_t start, end;           // ps
  std::string name, category, args;  // args: a JSON object's text
  std::int64_t transfer = -1;        // the transfer id of a send slice, else -1
};

// One resource (a stream, a device's sends, a link direction) before its slices are spread over
// lanes that never overlap.
struct Resource {
  int pid = 0;
  int order = 0;  // sort key inside the process
  std::string name;
  std::vector<Slice> slices;
};

struct Thread {
  int pid, tid;
  std::string name;
};

// Greedy interval partitioning in (start, end, name) order: each slice goes to the lowest lane that
// is free at its start. Returns the lane of each slice.
std::vector<std::size_t> assign_lanes(std::vector<Slice>& slices) {
  std::stable_sort(slices.begin(), slices.end(), [](const Slice& a, const Slice& b) {
    return std::tie(a.start, a.end) < std::tie(b.start, b.end);
  });
  std::vector<std::int64_t> free_at;
  std::vector<std::size_t> lane(slices.size());
  for (std::size_t i = 0; i < slices.size(); ++i) {
    std::size_t l = 0;
    while (l < free_at.size() && free_at[l] > slices[i].start) ++l;
    if (l == free_at.size()) free_at.push_back(0);
    free_at[l] = slices[i].end;
    lane[i] = l;
  }
  return lane;
}

std::string op_args(const Op& op, std::int32_t position) {
  if (op.kind == OpKind::ForwardBackward) {
    return fmt::format(
        R"({{"stage":{},"microbatch":{},"backward_stage":{},"backward_microbatch":{},"position":{}}})",
        op.stage, op.microbatch, op.backward_stage, op.backward_microbatch, position);
  }
  return fmt::format(R"({{"stage":{},"microbatch":{},"position":{}}})", op.stage, op.microbatch,
                     position);
}

}  // namespace

std::string format_microseconds(std::int64_t ps) {
  std::string sign = ps < 0 ? "-" : "";
  // Avoid negating INT64_MIN: work on the unsigned magnitude.
  std::uint64_t mag = ps < 0 ? ~static_cast<std::uint64_t>(ps) + 1 : static_cast<std::uint64_t>(ps);
  std::uint64_t whole = mag / 1000000, frac = mag % 1000000;
  if (frac == 0) return fmt::format("{}{}", sign, whole);
  std::string f = fmt::format("{:06}", frac);
  while (f.back() == '0') f.pop_back();
  return fmt::format("{}{}.{}", sign, whole, f);
}

std::string trace_file_for_schedule(const std::string& file, const std::string& label) {
  std::string safe;
  for (char c : label) {
    bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-';
    safe += ok ? c : '_';
  }
  while (!safe.empty() && safe.back() == '_') safe.pop_back();
  std::size_t slash = file.find_last_of('/');
  std::size_t dot = file.find_last_of('.');
  bool has_ext = dot != std::string::npos && (slash == std::string::npos || dot > slash + 1);
  if (!has_ext) return file + "." + safe;
  return file.substr(0, dot) + "." + safe + file.substr(dot);
}

namespace {

std::uint64_t op_key(std::int32_t device, std::int32_t position) {
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(device)) << 32) |
         static_cast<std::uint32_t>(position);
}

}  // namespace

bool ChromeTraceWriter::admit(Time start) {
  const std::size_t kept =
      ops_.size() + transfers_.size() + holds_.size() + collectives_.size() + phases_.size();
  if (!truncation_ && (max_events_ == 0 || kept < max_events_)) return true;
  if (!truncation_) truncation_ = TraceTruncation{kept, 0, start};
  ++truncation_->dropped;
  return false;
}

void ChromeTraceWriter::on_op_start(const OpEvent& e) {
  if (!admit(e.time)) return;
  open_ops_[op_key(e.device, e.position)] = ops_.size();
  ops_.push_back(OpRecord{e.device, e.position, e.op, e.time, e.time, false});
}

void ChromeTraceWriter::on_op_end(const OpEvent& e) {
  const auto it = open_ops_.find(op_key(e.device, e.position));
  if (it == open_ops_.end()) return;  // started after the bound
  OpRecord& r = ops_[it->second];
  r.end = e.time;
  r.ended = true;
  open_ops_.erase(it);
}

void ChromeTraceWriter::on_transfer_start(const TransferEvent& e) {
  if (!admit(e.time)) return;
  open_transfers_[e.id] = transfers_.size();
  transfers_.push_back(TransferRecord{e.id, e.from_device, e.to_device, e.bytes, e.producer,
                                      e.consumer, e.time, e.time, false});
}

void ChromeTraceWriter::on_transfer_end(const TransferEvent& e) {
  const auto it = open_transfers_.find(e.id);
  if (it == open_transfers_.end()) return;
  TransferRecord& r = transfers_[it->second];
  r.end = e.time;
  r.ended = true;
  open_transfers_.erase(it);
}

void ChromeTraceWriter::on_collective(const CollectiveEvent& e) {
  if (admit(e.start)) collectives_.push_back(e);
}

void ChromeTraceWriter::on_phase(const PhaseEvent& e) {
  if (admit(e.start)) phases_.push_back(e);
}

void ChromeTraceWriter::on_send_hold(const HoldEvent& e) {
  if (admit(e.start))
    holds_.push_back(HoldRecord{e.device, e.position, e.op, e.start, e.end, e.host_gap});
}

void ChromeTraceWriter::on_memory(std::int32_t device, Time time, Bytes activation, Bytes total) {
  if (truncation_ && time > truncation_->cut) return;
  memory_.on_memory(device, time, activation, total);
}

std::string ChromeTraceWriter::to_json(const TraceContext& context) const {
  const int devices = context.devices;
  const bool offloads = std::any_of(ops_.begin(), ops_.end(), [](const OpRecord& r) {
    return r.op.kind == OpKind::Offload || r.op.kind == OpKind::Reload;
  });
  const bool topology = context.topology != nullptr &&
                        context.device_vertex.size() == static_cast<std::size_t>(devices);
  const int host_pid = devices + 1;
  const int network_pid = devices + 2;

  // Resources, keyed by (pid, order) so that they come out sorted.
  std::map<std::pair<int, int>, Resource> resources;
  auto resource = [&](int pid, int order, const std::string& name) -> Resource& {
    Resource& r = resources[{pid, order}];
    r.pid = pid;
    r.order = order;
    r.name = name;
    return r;
  };
  // Every GPU gets its compute thread even when idle; copy and send threads only when used.
  for (int d = 0; d < devices; ++d) resource(d + 1, kComputeOrder, "compute");

  // Consumer op slices per (device, op label), in start order (one per replayed iteration), for
  // the flow's end.
  std::map<std::pair<int, std::string>, std::vector<const OpRecord*>> op_by_label;
  for (const OpRecord& r : ops_) {
    if (!r.ended) continue;
    Stream stream = stream_of(r.op.kind);
    int order = stream == Stream::Compute        ? kComputeOrder
                : stream == Stream::DeviceToHost ? kD2hOrder
                                                 : kH2dOrder;
    const char* name = stream == Stream::Compute        ? "compute"
                       : stream == Stream::DeviceToHost ? "D2H"
                                                        : "H2D";
    std::string label = to_string(r.op);
    resource(r.device + 1, order, name)
        .slices.push_back(Slice{r.start.ps(), r.end.ps(), label,
                                std::string(op_kind_name(r.op.kind)), op_args(r.op, r.position),
                                -1});
    op_by_label[{r.device, label}].push_back(&r);
  }
  // Blocking p2p: the compute stream held after an op until its sends arrived.
  for (const HoldRecord& h : holds_) {
    resource(h.device + 1, kComputeOrder, "compute")
        .slices.push_back(Slice{h.start.ps(), h.end.ps(),
                                h.host_gap ? fmt::format("host gap before {}", to_string(h.op))
                                           : fmt::format("send {} (blocking)", to_string(h.op)),
                                h.host_gap ? "host-gap" : "p2p-hold", op_args(h.op, h.position),
                                -1});
  }

  std::vector<const TransferRecord*> sends;
  for (const TransferRecord& t : transfers_) {
    if (t.ended) sends.push_back(&t);
  }
  std::map<LinkId, int> link_order;
  for (const TransferRecord* t : sends) {
    std::string args =
        fmt::format(R"({{"id":{},"from":"GPU {}","to":"GPU {}","bytes":{},"consumer":{}}})", t->id,
                    t->from, t->to, t->bytes.count(), json_string(to_string(t->consumer)));
    resource(t->from + 1, kSendOrder, "send")
        .slices.push_back(Slice{t->start.ps(), t->end.ps(),
                                fmt::format("{} -> GPU {}", to_string(t->producer), t->to),
                                "transfer", args, static_cast<std::int64_t>(t->id)});
    if (!topology) continue;
    std::optional<Route> route =
        context.topology->route(context.device_vertex[static_cast<std::size_t>(t->from)],
                                context.device_vertex[static_cast<std::size_t>(t->to)]);
    if (!route) continue;
    // Data moves over every link of the route at once; the route latency follows the last byte.
    std::int64_t link_end = std::max(t->start.ps(), t->end.ps() - route->latency.ps());
    for (LinkId l : route->links) {
      link_order.emplace(l, 0);
      resources[{network_pid, 1000000 + l}].slices.push_back(
          Slice{t->start.ps(), link_end, fmt::format("{} -> GPU {}", to_string(t->producer), t->to),
                "link", args, -1});
    }
  }
  // Collectives (docs/parallelism.md): one slice on the device's "sync" thread, one per step and
  // link on the network process.
  for (const CollectiveEvent& c : collectives_) {
    const double span = (c.end - c.start).seconds();
    std::string args = c.bus_bytes > 0 && span > 0
                           ? fmt::format(R"({{"bytes":{},"busbw_GBps":{:.2f}}})", c.bytes.count(),
                                         c.bus_bytes / span / 1e9)
                           : fmt::format(R"({{"bytes":{}}})", c.bytes.count());
    resource(c.device + 1, kSendOrder + 1, "sync")
        .slices.push_back(Slice{c.start.ps(), c.end.ps(), c.name, "collective", args, -1});
    if (!topology) continue;
    for (std::size_t i = 0; i < c.links.size(); ++i) {
      const LinkId l = c.links[i];
      link_order.emplace(l, 0);
      resources[{network_pid, 1000000 + l}].slices.push_back(
          Slice{c.link_start[i].ps(), c.link_end[i].ps(), c.name, "collective", args, -1});
    }
  }
  // Phases inside ops (docs/moe.md): a "phases" thread after the sync one.
  for (const PhaseEvent& p : phases_) {
    resource(p.device + 1, kPhaseOrder, "phases")
        .slices.push_back(Slice{p.start.ps(), p.end.ps(), p.name, "phase", p.args, -1});
  }
  // Recompute inside the backward (docs/memory.md): each backward that recomputes per unit
  // runs, unit after unit, the unit's recompute and then its backward; one "recompute unit k/N"
  // phase per unit, at the unit's share of the op and the stage's recompute time per unit.
  for (const OpRecord& r : context.stage_costs ? ops_ : std::vector<OpRecord>{}) {
    if (!r.ended || r.op.kind != OpKind::Backward) continue;
    const auto s = static_cast<std::size_t>(r.op.stage);
    if (s >= context.stage_costs->size()) continue;
    const StageCost::BackwardRecompute& b = (*context.stage_costs)[s].backward_recompute;
    if (b.units <= 0 || b.time <= Time::zero()) continue;
    const std::int64_t length = (r.end - r.start).ps(), redo = b.time.ps() / b.units;
    for (std::int64_t k = 0; k < b.units; ++k) {
      const std::int64_t from = r.start.ps() + length * k / b.units;
      resource(r.device + 1, kPhaseOrder, "phases")
          .slices.push_back(Slice{
              from, std::min(r.end.ps(), from + redo),
              fmt::format("recompute unit {}/{} of {}", k + 1, b.units, to_string(r.op)), "phase",
              fmt::format(R"({{"unit":{},"units":{},"unit_bytes":{},"recompute_ms":{:.6f}}})",
                          k + 1, b.units, b.unit.count(), Time::from_ps(redo).seconds() * 1e3),
              -1});
    }
  }
  for (auto& [l, order] : link_order) {
    Resource& r = resources[{network_pid, 1000000 + l}];
    r.pid = network_pid;
    r.order = 1000000 + l;
    r.name = context.topology->link_name(l);
  }

  // Lanes -> threads. tid: 1-based, in (order, lane) order within each process.
  std::vector<Thread> threads;
  struct Placed {
    int pid, tid;
    const Slice* slice;
  };
  std::vector<Placed> placed;
  std::map<int, int> next_tid;
  for (auto& [key, r] : resources) {
    std::vector<std::size_t> lanes = assign_lanes(r.slices);
    std::size_t lane_count = lanes.empty() ? 1 : *std::max_element(lanes.begin(), lanes.end()) + 1;
    int first = next_tid[r.pid] + 1;
    next_tid[r.pid] += static_cast<int>(lane_count);
    for (std::size_t l = 0; l < lane_count; ++l) {
      threads.push_back(Thread{r.pid, first + static_cast<int>(l),
                               l == 0 ? r.name : fmt::format("{} #{}", r.name, l + 1)});
    }
    for (std::size_t i = 0; i < r.slices.size(); ++i) {
      placed.push_back(Placed{r.pid, first + static_cast<int>(lanes[i]), &r.slices[i]});
    }
  }
  std::stable_sort(placed.begin(), placed.end(), [](const Placed& a, const Placed& b) {
    return std::tie(a.pid, a.tid, a.slice->start) < std::tie(b.pid, b.tid, b.slice->start);
  });

  std::vector<std::string> events;
  // Metadata.
  std::map<int, std::string> process_names;
  for (int d = 0; d < devices; ++d) process_names[d + 1] = fmt::format("GPU {}", d);
  if (offloads) process_names[host_pid] = "host";
  if (!link_order.empty()) process_names[network_pid] = "network";
  for (const auto& [pid, name] : process_names) {
    events.push_back(
        fmt::format(R"({{"ph":"M","pid":{},"tid":0,"name":"process_name","args":{{"name":{}}}}})",
                    pid, json_string(name)));
    events.push_back(fmt::format(
        R"({{"ph":"M","pid":{},"tid":0,"name":"process_sort_index","args":{{"sort_index":{}}}}})",
        pid, pid));
    for (const Thread& t : threads) {
      if (t.pid != pid) continue;
      events.push_back(
          fmt::format(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":{}}}}})",
                      t.pid, t.tid, json_string(t.name)));
      events.push_back(fmt::format(
          R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})",
          t.pid, t.tid, t.tid));
    }
  }
  // Complete slices; remember where each transfer's send slice went for its flow.
  std::map<std::uint32_t, std::pair<int, int>> send_thread;  // transfer id -> (pid, tid)
  for (const Placed& p : placed) {
    const Slice& s = *p.slice;
    events.push_back(fmt::format(
        R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"cat":{},"args":{}}})", p.pid,
        p.tid, format_microseconds(s.start), format_microseconds(s.end - s.start),
        json_string(s.name), json_string(s.category), s.args));
    if (s.transfer >= 0) send_thread[static_cast<std::uint32_t>(s.transfer)] = {p.pid, p.tid};
  }
  // Memory counters per GPU.
  for (int d = 0; d < devices && d < memory_.devices(); ++d) {
    for (const MemorySample& m : memory_.samples(d)) {
      events.push_back(fmt::format(
          R"({{"ph":"C","pid":{},"tid":0,"ts":{},"name":"memory","args":{{"activation_bytes":{},"total_bytes":{}}}}})",
          d + 1, format_microseconds(m.time.ps()), m.activation.count(), m.total.count()));
    }
  }
  // Offloaded activations per GPU, on the host: +1 when an offload ends, -1 when a reload starts.
  if (offloads) {
    std::vector<std::pair<std::int64_t, std::pair<int, int>>> changes;  // (time, (device, delta))
    for (const OpRecord& r : ops_) {
      if (r.op.kind == OpKind::Offload && r.ended) changes.push_back({r.end.ps(), {r.device, +1}});
      if (r.op.kind == OpKind::Reload) changes.push_back({r.start.ps(), {r.device, -1}});
    }
    std::stable_sort(changes.begin(), changes.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<int> level(static_cast<std::size_t>(devices), 0);
    for (const auto& [ts, change] : changes) {
      int& v = level[static_cast<std::size_t>(change.first)];
      v += change.second;
      events.push_back(fmt::format(
          R"({{"ph":"C","pid":{},"tid":0,"ts":{},"name":"offloaded GPU {}","args":{{"activations":{}}}}})",
          host_pid, format_microseconds(ts), change.first, v));
    }
  }
  // Flows: from the send slice to the slice of the op that consumed the data.
  for (const TransferRecord* t : sends) {
    auto sender = send_thread.find(t->id);
    auto consumer = op_by_label.find({t->to, to_string(t->consumer)});
    if (sender == send_thread.end() || consumer == op_by_label.end()) continue;
    // The consumer of this transfer: the first replay of that op to start after the data arrived.
    const std::vector<const OpRecord*>& replays = consumer->second;
    auto after = std::find_if(replays.begin(), replays.end(),
                              [&](const OpRecord* r) { return r->start >= t->end; });
    const OpRecord& c = after != replays.end() ? **after : *replays.back();
    events.push_back(fmt::format(
        R"({{"ph":"s","pid":{},"tid":{},"ts":{},"id":{},"name":"p2p","cat":"transfer"}})",
        sender->second.first, sender->second.second, format_microseconds(t->start.ps()), t->id));
    // The consumer is on its device's compute thread (tid 1): compute never needs a second lane.
    events.push_back(fmt::format(
        R"({{"ph":"f","bp":"e","pid":{},"tid":1,"ts":{},"id":{},"name":"p2p","cat":"transfer"}})",
        c.device + 1, format_microseconds(c.start.ps()), t->id));
  }

  std::string truncated;
  if (truncation_) {
    truncated = fmt::format(
        ",\"truncated\":{{\"events_kept\":{},\"events_dropped\":{},\"from_us\":{}}}",
        truncation_->kept, truncation_->dropped, format_microseconds(truncation_->cut.ps()));
  }
  std::string out =
      "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"schedule\":" + json_string(context.label) +
      ",\"generator\":" + json_string(std::string("bubblesim ") + BUBBLESIM_VERSION) + truncated +
      "},\"traceEvents\":[\n";
  for (std::size_t i = 0; i < events.size(); ++i) {
    out += events[i];
    out += i + 1 < events.size() ? ",\n" : "\n";
  }
  out += "]}\n";
  return out;
}

std::string combine_traces(const std::vector<std::pair<std::string, std::string>>& traces) {
  std::vector<std::string> labels;
  std::string events;
  std::int64_t pid_base = 0, id_base = 0;
  for (const auto& [label, text] : traces) {
    labels.push_back(label);
    nlohmann::json trace = nlohmann::json::parse(text);
    std::int64_t max_pid = 0, max_id = 0;
    for (nlohmann::json& e : trace.at("traceEvents")) {
      const std::int64_t pid = e.at("pid").get<std::int64_t>();
      max_pid = std::max(max_pid, pid);
      e["pid"] = pid + pid_base;
      if (e.contains("id")) {
        max_id = std::max(max_id, e["id"].get<std::int64_t>());
        e["id"] = e["id"].get<std::int64_t>() + id_base;
      }
      const std::string name = e.value("name", "");
      if (e.value("ph", "") == "M" && name == "process_name")
        e["args"]["name"] = label + ": " + e["args"]["name"].get<std::string>();
      if (e.value("ph", "") == "M" && name == "process_sort_index")
        e["args"]["sort_index"] = pid + pid_base;
      events += (events.empty() ? "" : ",\n") + e.dump();
    }
    pid_base += max_pid;
    id_base += max_id + 1;
  }
  nlohmann::json other = {{"schedules", labels},
                          {"generator", std::string("bubblesim ") + BUBBLESIM_VERSION}};
  return "{\"displayTimeUnit\":\"ms\",\"otherData\":" + other.dump() + ",\"traceEvents\":[\n" +
         events + "\n]}\n";
}

}  // namespace bubblesim
