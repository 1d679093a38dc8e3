// Writing a table as Chakra execution traces, one per rank (chakra_et.h).
#include <fmt/format.h>

#include <algorithm>

#include "schedules/chakra_et.h"
#include "schedules/chakra_schema.h"
#include "schedules/protobuf_wire.h"
#include "schedules/table_index.h"

namespace bubblesim {
namespace {

using namespace chakra;

std::string attr(const char* name, std::uint32_t field, std::uint64_t value) {
  ProtoWriter w;
  w.delimited(kAttrName, name);
  w.varint(field, value);
  return w.bytes();
}
std::string int64_attr(const char* name, std::int64_t v) {
  return attr(name, kAttrInt64, static_cast<std::uint64_t>(v));
}
std::string int32_attr(const char* name, std::int32_t v) {  // int32: sign-extended varint
  return attr(name, kAttrInt32, static_cast<std::uint64_t>(static_cast<std::int64_t>(v)));
}
std::string string_attr(const char* name, std::string_view v) {
  ProtoWriter w;
  w.delimited(kAttrName, name);
  w.delimited(kAttrString, v);
  return w.bytes();
}
std::string list_attr(const char* name, const std::vector<std::int32_t>& values) {
  std::vector<std::uint64_t> raw;
  for (std::int32_t v : values) raw.push_back(static_cast<std::uint64_t>(std::int64_t{v}));
  ProtoWriter list;
  list.packed(kListValues, raw);
  ProtoWriter w;
  w.delimited(kAttrName, name);
  w.delimited(kAttrInt64List, list.bytes());
  return w.bytes();
}

/// A Node message's fields; written by node_message.
struct NodeFields {
  std::uint64_t id = 0;
  std::string name;
  std::uint64_t type = kCompNode;
  std::vector<std::uint64_t> ctrl_deps, data_deps;
  std::uint64_t start_micros = 0, duration_micros = 0;
  std::vector<std::string> attrs;  // encoded AttributeProto messages
};

std::string node_message(const NodeFields& n) {
  ProtoWriter w;
  w.varint(kNodeId, n.id);
  w.delimited(kNodeName, n.name);
  w.varint(kNodeType, n.type);
  if (!n.ctrl_deps.empty()) w.packed(kNodeCtrlDeps, n.ctrl_deps);
  if (!n.data_deps.empty()) w.packed(kNodeDataDeps, n.data_deps);
  if (n.start_micros != 0) w.varint(kNodeStart, n.start_micros);
  if (n.duration_micros != 0) w.varint(kNodeDuration, n.duration_micros);
  for (const std::string& a : n.attrs) w.delimited(kNodeAttr, a);
  return w.bytes();
}

void append_message(std::string& file, const std::string& message) {
  append_varint(file, message.size());
  file += message;
}

std::string metadata_message(const Table& t, std::int32_t rank) {
  ProtoWriter w;
  w.delimited(kMetaVersion, kChakraVersion);
  std::vector<std::int32_t> device_of_stage;
  for (const auto& replica : t.placement.device_of_stage)
    device_of_stage.insert(device_of_stage.end(), replica.begin(), replica.end());
  for (const std::string& a :
       {int64_attr(kDevices, t.devices), int64_attr(kRank, rank), int64_attr(kStages, t.stages),
        int64_attr(kChunks, t.chunks), int64_attr(kMicrobatches, t.microbatches),
        list_attr(kDeviceOfStage, device_of_stage),
        list_attr(kReplicaOfMicrobatch, t.placement.replica_of_microbatch)})
    w.delimited(kMetaAttr, a);
  return w.bytes();
}

/// An op whose output another op reads; `boundary` is the stage whose output tensor it is.
struct Input {
  OpLocation from;
  std::int32_t boundary = 0;
};

/// The ops whose outputs `op` reads (chakra_et.h lists them), where the table has them.
std::vector<Input> inputs_of(const Op& op, const Table& t, const TableIndex& index) {
  std::vector<Input> out;
  auto add = [&](OpKind kind, std::int32_t s, std::int32_t j, std::int32_t boundary) {
    if (s < 0 || s >= t.stages || j < 0 || j >= t.microbatches) return;
    const OpLocation at = index.find(kind, s, j);
    if (at.present()) out.push_back({at, boundary});
  };
  auto backward = [&](std::int32_t s, std::int32_t j) {
    add(OpKind::Backward, s + 1, j, s);
    for (OpKind k : {OpKind::Forward, OpKind::Recompute, OpKind::Reload}) add(k, s, j, s);
  };
  const std::int32_t s = op.stage, j = op.microbatch;
  switch (op.kind) {
    case OpKind::Forward:
      add(OpKind::Forward, s - 1, j, s - 1);
      break;
    case OpKind::Backward:
      backward(s, j);
      break;
    case OpKind::Weight:
      add(OpKind::Backward, s, j, s);
      break;
    case OpKind::Recompute:
    case OpKind::Offload:
      add(OpKind::Forward, s, j, s);
      break;
    case OpKind::Reload:
      add(OpKind::Offload, s, j, s);
      break;
    case OpKind::ForwardBackward:
      add(OpKind::Forward, s - 1, j, s - 1);
      backward(op.backward_stage, op.backward_microbatch);
      break;
  }
  return out;
}

/// A dependency between ranks: a send after `from` and a receive before `to`.
struct CrossEdge {
  OpLocation from, to;
  std::int32_t boundary = 0;
};

/// Per-rank emission state: node ids of the compute ops and receives written so far.
struct RankTrace {
  std::string file;
  std::uint64_t next_id = 0;
  std::vector<std::uint64_t> op_id;  // by position
};

}  // namespace

std::string chakra_file_name(std::int32_t rank) { return fmt::format("bubblesim.{}.et", rank); }

namespace {

struct TraceWriter {
  TraceWriter(const Table& t, const OpTimes& op_times, const std::vector<std::int64_t>& bytes)
      : table(t), times(op_times), bytes_of_stage(bytes) {
    collect_edges();
  }

  const Table& table;
  const OpTimes& times;
  const std::vector<std::int64_t>& bytes_of_stage;
  TableIndex index{table};
  std::vector<CrossEdge> edges;
  // [device][position] -> edges received before / sent after that op
  std::vector<std::vector<std::vector<std::size_t>>> recv_before, send_after;

  void collect_edges();
  NodeFields compute_node(RankTrace& r, std::int32_t d, std::int32_t p,
                          std::vector<std::uint64_t> recv_ids) const;
  NodeFields comm_node(RankTrace& r, std::size_t e, bool send) const;
  std::string write_rank(std::int32_t d) const;
};

void TraceWriter::collect_edges() {
  recv_before.resize(table.device_ops.size());
  send_after.resize(table.device_ops.size());
  for (std::size_t d = 0; d < table.device_ops.size(); ++d) {
    recv_before[d].resize(table.device_ops[d].size());
    send_after[d].resize(table.device_ops[d].size());
  }
  for (std::size_t d = 0; d < table.device_ops.size(); ++d) {
    for (std::size_t p = 0; p < table.device_ops[d].size(); ++p) {
      for (const Input& in : inputs_of(table.device_ops[d][p], table, index)) {
        if (in.from.device == static_cast<std::int32_t>(d)) continue;
        const std::size_t e = edges.size();
        edges.push_back(
            {in.from, {static_cast<std::int32_t>(d), static_cast<std::int32_t>(p)}, in.boundary});
        recv_before[d][p].push_back(e);
        send_after[static_cast<std::size_t>(in.from.device)]
                  [static_cast<std::size_t>(in.from.position)]
                      .push_back(e);
      }
    }
  }
}

NodeFields TraceWriter::compute_node(RankTrace& r, std::int32_t d, std::int32_t p,
                                     std::vector<std::uint64_t> recv_ids) const {
  const auto di = static_cast<std::size_t>(d), pi = static_cast<std::size_t>(p);
  const Op& op = table.device_ops[di][pi];
  NodeFields n;
  n.id = r.next_id++;
  n.name = to_string(op);
  if (p > 0) n.ctrl_deps.push_back(r.op_id[pi - 1]);
  for (const Input& in : inputs_of(op, table, index)) {
    if (in.from.device == d && in.from.position < p)
      n.data_deps.push_back(r.op_id[static_cast<std::size_t>(in.from.position)]);
  }
  n.data_deps.insert(n.data_deps.end(), recv_ids.begin(), recv_ids.end());
  if (di < times.size() && pi < times[di].size()) {
    const auto [start, end] = times[di][pi];
    auto micros = [](std::int64_t ps) {
      return static_cast<std::uint64_t>(std::max<std::int64_t>(0, (ps + 500'000) / 1'000'000));
    };
    n.start_micros = micros(start.ps());
    n.duration_micros = micros(end.ps() - start.ps());
  }
  n.attrs = {attr("is_cpu_op", kAttrBool, 0),
             string_attr(kKind, std::string(1, op_kind_letter(op.kind))),
             int64_attr(kStage, op.stage), int64_attr(kMicrobatch, op.microbatch)};
  if (op.kind == OpKind::ForwardBackward) {
    n.attrs.push_back(int64_attr(kBackwardStage, op.backward_stage));
    n.attrs.push_back(int64_attr(kBackwardMicrobatch, op.backward_microbatch));
  }
  return n;
}

NodeFields TraceWriter::comm_node(RankTrace& r, std::size_t e, bool send) const {
  const CrossEdge& edge = edges[e];
  const Op& producer = table.device_ops[static_cast<std::size_t>(edge.from.device)]
                                       [static_cast<std::size_t>(edge.from.position)];
  NodeFields n;
  n.id = r.next_id++;
  n.type = send ? kSendNode : kRecvNode;
  n.name = fmt::format("{} {} {} {}", send ? "send" : "recv", to_string(producer),
                       send ? "to" : "from", send ? edge.to.device : edge.from.device);
  const auto b = static_cast<std::size_t>(edge.boundary);
  const std::int64_t size = b < bytes_of_stage.size() ? bytes_of_stage[b] : 0;
  n.attrs = {attr("is_cpu_op", kAttrBool, 0),
             int32_attr(send ? "comm_dst" : "comm_src", send ? edge.to.device : edge.from.device),
             int32_attr("comm_tag", static_cast<std::int32_t>(e)), int64_attr("comm_size", size)};
  return n;
}

std::string TraceWriter::write_rank(std::int32_t d) const {
  RankTrace r;
  append_message(r.file, metadata_message(table, d));
  const std::vector<Op>& ops = table.device_ops[static_cast<std::size_t>(d)];
  r.op_id.resize(ops.size());
  for (std::size_t p = 0; p < ops.size(); ++p) {
    std::vector<std::uint64_t> recv_ids;
    for (std::size_t e : recv_before[static_cast<std::size_t>(d)][p]) {
      recv_ids.push_back(r.next_id);
      append_message(r.file, node_message(comm_node(r, e, false)));
    }
    const NodeFields op = compute_node(r, d, static_cast<std::int32_t>(p), std::move(recv_ids));
    r.op_id[p] = op.id;
    append_message(r.file, node_message(op));
    for (std::size_t e : send_after[static_cast<std::size_t>(d)][p]) {
      NodeFields send = comm_node(r, e, true);
      send.data_deps.push_back(op.id);
      append_message(r.file, node_message(send));
    }
  }
  return r.file;
}

}  // namespace

std::vector<std::string> write_chakra_traces(const Table& table, const OpTimes& times,
                                             const std::vector<std::int64_t>& bytes_of_stage) {
  const TraceWriter writer(table, times, bytes_of_stage);
  std::vector<std::string> files;
  for (std::int32_t d = 0; d < static_cast<std::int32_t>(table.device_ops.size()); ++d)
    files.push_back(writer.write_rank(d));
  return files;
}

}  // namespace bubblesim
