// Reading Chakra execution traces written by bubblesim back into a Table (chakra_et.h).
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "schedules/chakra_et.h"
#include "schedules/chakra_schema.h"
#include "schedules/protobuf_wire.h"
#include "sim/units/diagnostics.h"
#include "sim/units/text_file.h"

namespace bubblesim {
namespace {

using namespace chakra;

/// An attribute's value as read: an integer, a string or an integer list.
struct AttrValue {
  std::optional<std::int64_t> integer;
  std::optional<std::string_view> text;
  std::optional<std::vector<std::int64_t>> list;
};
using Attrs = std::map<std::string_view, AttrValue>;

/// A problem at a byte of a file; turned into a diagnostic by the caller.
struct TraceError {
  std::size_t offset;
  std::string message;
};

std::vector<std::int64_t> int_list(std::string_view bytes, std::size_t base) {
  std::vector<std::int64_t> out;
  ProtoReader r(bytes, base);
  for (ProtoField f; r.next(f);) {
    if (f.number != kListValues) continue;
    for (std::uint64_t v : repeated_varints(f)) out.push_back(static_cast<std::int64_t>(v));
  }
  return out;
}

void read_attr(const ProtoField& outer, Attrs& attrs) {
  ProtoReader r(outer.bytes, outer.offset);
  std::string_view name;
  AttrValue value;
  for (ProtoField f; r.next(f);) {
    const bool varint = f.type == WireType::Varint, bytes = f.type == WireType::Delimited;
    if (f.number == kAttrName && bytes) name = f.bytes;
    if ((f.number == kAttrInt32 || f.number == kAttrInt64 || f.number == kAttrBool) && varint)
      value.integer = static_cast<std::int64_t>(f.value);
    if (f.number == kAttrString && bytes) value.text = f.bytes;
    if (f.number == kAttrInt64List && bytes) value.list = int_list(f.bytes, f.offset);
  }
  attrs[name] = std::move(value);
}

/// The integer attribute `name`; a TraceError when it is missing or not an integer.
std::int64_t integer(const Attrs& attrs, const char* name, std::size_t offset,
                     const std::string& what) {
  auto it = attrs.find(name);
  if (it == attrs.end() || !it->second.integer)
    throw TraceError{offset, fmt::format("{} has no integer attribute {}", what, name)};
  return *it->second.integer;
}

/// The table's shape as one rank's GlobalMetadata states it.
struct Shape {
  std::int64_t devices = 0, rank = 0, stages = 0, chunks = 0, microbatches = 0;
  std::vector<std::int64_t> device_of_stage, replica_of_microbatch;
  bool operator==(const Shape& o) const {
    return devices == o.devices && stages == o.stages && chunks == o.chunks &&
           microbatches == o.microbatches && device_of_stage == o.device_of_stage &&
           replica_of_microbatch == o.replica_of_microbatch;
  }
};

Shape read_metadata(std::size_t offset, std::string_view body) {
  Attrs attrs;
  bool has_version = false;
  ProtoReader r(body, offset);
  for (ProtoField f; r.next(f);) {
    if (f.number == kMetaVersion && f.type == WireType::Delimited) has_version = true;
    if (f.number == kMetaAttr && f.type == WireType::Delimited) read_attr(f, attrs);
  }
  const std::string what = "the GlobalMetadata (the first message)";
  if (!has_version) throw TraceError{offset, what + " has no version"};
  Shape s;
  s.devices = integer(attrs, kDevices, offset, what);
  s.rank = integer(attrs, kRank, offset, what);
  s.stages = integer(attrs, kStages, offset, what);
  s.chunks = integer(attrs, kChunks, offset, what);
  s.microbatches = integer(attrs, kMicrobatches, offset, what);
  auto list = [&](const char* name) {
    auto it = attrs.find(name);
    if (it == attrs.end() || !it->second.list)
      throw TraceError{offset, fmt::format("{} has no integer-list attribute {}", what, name)};
    return *it->second.list;
  };
  s.device_of_stage = list(kDeviceOfStage);
  s.replica_of_microbatch = list(kReplicaOfMicrobatch);
  return s;
}

/// A compute node as read, before its values are checked against the shape.
struct ComputeNode {
  std::size_t offset = 0;
  std::uint64_t id = 0;
  char kind = 0;
  std::int64_t stage = 0, microbatch = 0, backward_stage = -1, backward_microbatch = -1;
};

/// Reads a Node; nullopt for a node that is not a compute node (communication, metadata).
std::optional<ComputeNode> read_node(std::size_t offset, std::string_view body,
                                     std::set<std::uint64_t>& ids) {
  Attrs attrs;
  std::optional<std::uint64_t> id;
  std::uint64_t type = 0;
  ProtoReader r(body, offset);
  for (ProtoField f; r.next(f);) {
    if (f.number == kNodeId && f.type == WireType::Varint) id = f.value;
    if (f.number == kNodeType && f.type == WireType::Varint) type = f.value;
    if (f.number == kNodeAttr && f.type == WireType::Delimited) read_attr(f, attrs);
  }
  if (!id) throw TraceError{offset, "a node without an id"};
  if (!ids.insert(*id).second) throw TraceError{offset, fmt::format("node {}: duplicate id", *id)};
  if (type != kCompNode) return std::nullopt;
  const std::string what = fmt::format("node {} (a compute node)", *id);
  ComputeNode n{offset, *id};
  auto kind = attrs.find(kKind);
  if (kind == attrs.end() || !kind->second.text || kind->second.text->size() != 1 ||
      !op_kind_from_letter(kind->second.text->front()))
    throw TraceError{offset, what + " has no " + kKind +
                                 " of F B W R O L X; only traces "
                                 "written by bubblesim can be read"};
  n.kind = kind->second.text->front();
  n.stage = integer(attrs, kStage, offset, what);
  n.microbatch = integer(attrs, kMicrobatch, offset, what);
  if (*op_kind_from_letter(n.kind) == OpKind::ForwardBackward) {
    n.backward_stage = integer(attrs, kBackwardStage, offset, what);
    n.backward_microbatch = integer(attrs, kBackwardMicrobatch, offset, what);
  }
  return n;
}

/// One rank's file as read.
struct RankRead {
  Shape shape;
  std::size_t shape_offset = 0;
  std::vector<ComputeNode> nodes;
};

RankRead read_rank(const ChakraTraceFile& in) {
  const auto messages = split_delimited_stream(in.bytes);
  if (messages.empty())
    throw TraceError{0, "the file is empty: a Chakra trace begins with a GlobalMetadata"};
  RankRead out;
  out.shape_offset = messages.front().first;
  out.shape = read_metadata(messages.front().first, messages.front().second);
  std::set<std::uint64_t> ids;
  for (std::size_t i = 1; i < messages.size(); ++i) {
    if (auto n = read_node(messages[i].first, messages[i].second, ids)) out.nodes.push_back(*n);
  }
  return out;
}

}  // namespace

namespace {

void add_error(DiagnosticList& errors, const std::string& file, std::size_t offset,
               const std::string& message) {
  errors.add(SourceLocation{file, 0, 0}, "", fmt::format("byte {}: {}", offset, message));
}

/// Problems of rank 0's shape, given how many files and compute nodes there are.
std::vector<std::string> shape_problems(const Shape& s, std::size_t files, std::size_t nodes) {
  std::vector<std::string> out;
  const auto most = static_cast<std::int64_t>(std::max<std::size_t>(nodes, 1));
  if (s.devices != static_cast<std::int64_t>(files))
    out.push_back(fmt::format("{} is {} but there are {} rank files", kDevices, s.devices, files));
  if (s.stages < 1 || s.stages > most)
    out.push_back(
        fmt::format("{} {} is not between 1 and the {} compute nodes", kStages, s.stages, nodes));
  if (s.microbatches < 1 || s.microbatches > most)
    out.push_back(fmt::format("{} {} is not between 1 and the {} compute nodes", kMicrobatches,
                              s.microbatches, nodes));
  if (s.chunks < 1 || s.chunks > std::max<std::int64_t>(s.stages, 1))
    out.push_back(fmt::format("{} {} is not between 1 and {}", kChunks, s.chunks, s.stages));
  if (out.empty() && s.stages * s.microbatches > most)
    out.push_back(
        fmt::format("{} stages x {} microbatches need that many forwards but there are "
                    "{} compute nodes",
                    s.stages, s.microbatches, nodes));
  if (!out.empty()) return out;
  const auto places = static_cast<std::int64_t>(s.device_of_stage.size());
  if (places == 0 || places % s.stages != 0)
    out.push_back(fmt::format("{} has {} entries, not a multiple of {} stages", kDeviceOfStage,
                              places, s.stages));
  for (std::int64_t d : s.device_of_stage) {
    if (d < 0 || d >= s.devices) {
      out.push_back(
          fmt::format("{} names device {}, not one of 0..{}", kDeviceOfStage, d, s.devices - 1));
      break;
    }
  }
  const std::int64_t replicas = places / s.stages;
  const auto& rm = s.replica_of_microbatch;
  if (!rm.empty() &&
      (static_cast<std::int64_t>(rm.size()) != s.microbatches ||
       std::any_of(rm.begin(), rm.end(), [&](std::int64_t r) { return r < 0 || r >= replicas; })))
    out.push_back(fmt::format("{} must be empty or one replica (0..{}) per microbatch",
                              kReplicaOfMicrobatch, replicas - 1));
  return out;
}

Placement placement_of(const Shape& s) {
  Placement p;
  const auto stages = static_cast<std::size_t>(s.stages);
  for (std::size_t i = 0; i < s.device_of_stage.size(); i += stages) {
    p.device_of_stage.emplace_back();
    for (std::size_t k = i; k < i + stages; ++k)
      p.device_of_stage.back().push_back(static_cast<std::int32_t>(s.device_of_stage[k]));
  }
  for (std::int64_t r : s.replica_of_microbatch)
    p.replica_of_microbatch.push_back(static_cast<std::int32_t>(r));
  return p;
}

/// The op of a checked compute node; nullopt (and an error) when a value is out of range.
std::optional<Op> op_of(const ComputeNode& n, const Shape& s, const std::string& file,
                        DiagnosticList& errors) {
  auto in_range = [&](std::int64_t v, std::int64_t limit, const char* name) {
    if (v >= 0 && v < limit) return true;
    add_error(errors, file, n.offset,
              fmt::format("node {}: {} {} is not between 0 and {}", n.id, name, v, limit - 1));
    return false;
  };
  const OpKind kind = *op_kind_from_letter(n.kind);
  bool ok =
      in_range(n.stage, s.stages, kStage) && in_range(n.microbatch, s.microbatches, kMicrobatch);
  if (kind == OpKind::ForwardBackward)
    ok = ok && in_range(n.backward_stage, s.stages, kBackwardStage) &&
         in_range(n.backward_microbatch, s.microbatches, kBackwardMicrobatch);
  if (!ok) return std::nullopt;
  Op op{kind, static_cast<std::int32_t>(n.stage), static_cast<std::int32_t>(n.microbatch)};
  if (kind == OpKind::ForwardBackward) {
    op.backward_stage = static_cast<std::int32_t>(n.backward_stage);
    op.backward_microbatch = static_cast<std::int32_t>(n.backward_microbatch);
  }
  return op;
}

/// Checks every rank's shape against rank 0's and builds the table; errors collected.
Table build_table(const std::vector<ChakraTraceFile>& files, const std::vector<RankRead>& ranks,
                  DiagnosticList& errors) {
  const Shape& shape = ranks.front().shape;
  std::size_t nodes = 0;
  for (const RankRead& r : ranks) nodes += r.nodes.size();
  for (const std::string& p : shape_problems(shape, files.size(), nodes))
    add_error(errors, files.front().file, ranks.front().shape_offset, p);
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].shape.rank != static_cast<std::int64_t>(i))
      add_error(
          errors, files[i].file, ranks[i].shape_offset,
          fmt::format("{} is {} but this is the file of rank {}", kRank, ranks[i].shape.rank, i));
    if (i > 0 && !(ranks[i].shape == shape))
      add_error(errors, files[i].file, ranks[i].shape_offset,
                fmt::format("the table's shape differs from rank 0's ({})", files.front().file));
  }
  if (!errors.empty()) return {};
  Table t;
  t.devices = static_cast<std::int32_t>(shape.devices);
  t.stages = static_cast<std::int32_t>(shape.stages);
  t.chunks = static_cast<std::int32_t>(shape.chunks);
  t.microbatches = static_cast<std::int32_t>(shape.microbatches);
  t.placement = placement_of(shape);
  t.device_ops.resize(ranks.size());
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    for (const ComputeNode& n : ranks[i].nodes) {
      if (std::optional<Op> op = op_of(n, shape, files[i].file, errors))
        t.device_ops[i].push_back(*op);
    }
  }
  return t;
}

}  // namespace

Table read_chakra_traces(const std::vector<ChakraTraceFile>& files) {
  DiagnosticList errors;
  if (files.empty()) throw InputError("no Chakra trace files to read");
  std::vector<RankRead> ranks;
  for (const ChakraTraceFile& f : files) {
    try {
      ranks.push_back(read_rank(f));
    } catch (const WireError& e) {
      add_error(errors, f.file, e.offset(), e.what());
    } catch (const TraceError& e) {
      add_error(errors, f.file, e.offset, e.message);
    }
  }
  errors.throw_if_any();
  Table table = build_table(files, ranks, errors);
  errors.throw_if_any();
  return table;
}

Table read_chakra_folder(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(path, ec))
    throw InputError(fmt::format("{}: not a folder of Chakra traces (PREFIX.RANK.et)", path));
  std::map<std::string, std::map<long long, std::string>> by_prefix;  // prefix -> rank -> path
  for (const fs::directory_entry& e : fs::directory_iterator(path, ec)) {
    const fs::path name = e.path().filename();
    if (name.extension() != ".et") continue;
    const fs::path stem = name.stem();  // PREFIX.RANK
    const std::string rank = stem.extension().string();
    if (rank.size() < 2 || rank.size() > 10 ||
        !std::all_of(rank.begin() + 1, rank.end(), [](char c) { return c >= '0' && c <= '9'; }))
      continue;
    by_prefix[stem.stem().string()][std::stoll(rank.substr(1))] = e.path().string();
  }
  if (by_prefix.size() != 1)
    throw InputError(fmt::format(
        "{}: needs the traces of one run, PREFIX.0.et .. PREFIX.N.et; found {} prefixes", path,
        by_prefix.size()));
  std::vector<ChakraTraceFile> files;
  for (const auto& [rank, file] : by_prefix.begin()->second) {
    if (rank != static_cast<long long>(files.size()))
      throw InputError(fmt::format("{}: the trace of rank {} is missing", path, files.size()));
    files.push_back({file, read_text_file(file, InputSource::file, kMaxTableFileBytes)});
  }
  return read_chakra_traces(files);
}

}  // namespace bubblesim
