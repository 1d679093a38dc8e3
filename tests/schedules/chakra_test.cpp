// Chakra execution traces: the wire bytes of a node checked by hand, send/receive pairs, round
// trips of tables with replicas and fused ops, located errors for truncated and corrupt files.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "schedules/chakra_et.h"
#include "schedules/protobuf_wire.h"
#include "schedules/torch_csv.h"
#include "sim/units/diagnostics.h"

using namespace bubblesim;

namespace {

std::string data(const std::string& name) {
  return std::string(BUBBLESIM_SOURCE_DIR) + "/tests/data/pytorch/" + name;
}

/// A 2-stage, 1-microbatch 1F1B table: rank 0 runs F0.0 then B0.0, rank 1 F1.0 then B1.0.
Table two_stage_table() {
  Table t = Table::empty(2, 1, 1, Placement::straight(2));
  t.device_ops[0] = {Op::forward(0, 0), Op::backward(0, 0)};
  t.device_ops[1] = {Op::forward(1, 0), Op::backward(1, 0)};
  return t;
}

std::vector<ChakraTraceFile> as_files(const std::vector<std::string>& traces) {
  std::vector<ChakraTraceFile> files;
  for (std::size_t r = 0; r < traces.size(); ++r)
    files.push_back({chakra_file_name(static_cast<std::int32_t>(r)), traces[r]});
  return files;
}

/// The first rendered diagnostic of reading `files`, or "" when they read.
std::string first_error(const std::vector<ChakraTraceFile>& files) {
  try {
    read_chakra_traces(files);
  } catch (const InputError& e) {
    return e.diagnostics().front().render();
  }
  return "";
}

void check_same(const Table& a, const Table& b) {
  CHECK(a.devices == b.devices);
  CHECK(a.stages == b.stages);
  CHECK(a.chunks == b.chunks);
  CHECK(a.microbatches == b.microbatches);
  CHECK(a.placement.device_of_stage == b.placement.device_of_stage);
  CHECK(a.placement.replica_of_microbatch == b.placement.replica_of_microbatch);
  CHECK(a.device_ops == b.device_ops);
}

}  // namespace

TEST_CASE("a compute node's bytes, checked by hand against et_def.proto") {
  const Table t = two_stage_table();
  OpTimes times{{{Time::from_ps(0), Time::from_ps(1'500'000'000)},
                 {Time::from_ps(1'500'000'000), Time::from_ps(2'000'000'000)}}};
  const std::vector<std::string> traces = write_chakra_traces(t, times);
  REQUIRE(traces.size() == 2);
  const auto messages = split_delimited_stream(traces[0]);
  // Rank 0: GlobalMetadata, F0.0, send F0.0 to 1, recv B1.0 from 1, B0.0.
  REQUIRE(messages.size() == 5);
  const std::string attr_cpu = std::string("\x0a\x09is_cpu_op\xd8\x01\x00", 14);
  const std::string attr_kind = std::string(
      "\x0a\x0e"
      "bubblesim.kind\xea\x01\x01"
      "F",
      20);
  const std::string attr_stage = std::string(
      "\x0a\x0f"
      "bubblesim.stage\x48\x00",
      19);
  const std::string attr_mb = std::string(
      "\x0a\x14"
      "bubblesim.microbatch\x48\x00",
      24);
  const std::string f00 = std::string("\x08\x00", 2) +  // id = 0
                          "\x12\x04"
                          "F0.0" +          // name
                          "\x18\x04" +      // type = COMP_NODE
                          "\x38\xdc\x0b" +  // duration_micros = 1500
                          "\x52\x0e" +
                          attr_cpu + "\x52\x14" + attr_kind + "\x52\x13" + attr_stage + "\x52\x18" +
                          attr_mb;  // attr (field 10) x 4
  CHECK(messages[1].second == f00);
  // The stream's length prefix of that node is its size as one varint byte.
  CHECK(static_cast<unsigned char>(traces[0][messages[1].first - 1]) == f00.size());
  // B0.0 (id 3): start 1500 us, ctrl_deps [0] and data_deps [0, 2] (F0.0 and the receive),
  // packed.
  const std::string_view b00 = messages[4].second;
  CHECK(b00.substr(0, 2) == std::string_view("\x08\x03", 2));
  CHECK(b00.find(std::string("\x22\x01\x00", 3)) != std::string_view::npos);
  CHECK(b00.find(std::string("\x2a\x02\x00\x02", 4)) != std::string_view::npos);
  CHECK(b00.find("\x30\xdc\x0b") != std::string_view::npos);  // start_time_micros = 1500
}

TEST_CASE("send and receive nodes pair up across ranks with peers and tags") {
  const std::vector<std::string> traces = write_chakra_traces(two_stage_table(), {}, {4096, 4096});
  const auto rank0 = split_delimited_stream(traces[0]);
  const auto rank1 = split_delimited_stream(traces[1]);
  REQUIRE(rank1.size() == 5);  // metadata, recv F0.0, F1.0, B1.0, send B1.0
  auto type_of = [](std::string_view node) {
    ProtoReader r(node, 0);
    for (ProtoField f; r.next(f);)
      if (f.number == 3) return f.value;
    return std::uint64_t{0};
  };
  CHECK(type_of(rank0[2].second) == 5);  // COMM_SEND_NODE
  CHECK(type_of(rank1[1].second) == 6);  // COMM_RECV_NODE
  CHECK(rank0[2].second.find("send F0.0 to 1") != std::string_view::npos);
  CHECK(rank1[1].second.find("recv F0.0 from 0") != std::string_view::npos);
  // comm_dst = 1 (int32_val, field 7) and comm_size = 4096 (int64_val: 0x48 0x80 0x20).
  CHECK(rank0[2].second.find(std::string("comm_dst\x38\x01", 10)) != std::string_view::npos);
  CHECK(rank0[2].second.find(std::string("comm_size\x48\x80\x20", 12)) != std::string_view::npos);
  CHECK(rank1[1].second.find(std::string("comm_src\x38\x00", 10)) != std::string_view::npos);
}

TEST_CASE("golden PyTorch tables round-trip through Chakra; a folder reads back") {
  for (const char* name :
       {"dualpipev_4rank_10mb.csv", "zb1p_2rank_2stagep_compute_2024dialect.csv"}) {
    CAPTURE(name);
    const Table t = read_torch_csv_file(data(name), std::nullopt).table;
    check_same(read_chakra_traces(as_files(write_chakra_traces(t))), t);
  }
  // Replicas (each microbatch on one of two replicas) and a fused op.
  Table t = Table::empty(2, 1, 2, Placement::straight(2));
  t.placement.device_of_stage.push_back({1, 0});
  t.placement.replica_of_microbatch = {0, 1};
  t.device_ops[0] = {Op::forward(0, 0), Op::fused(1, 1, 0, 0), Op::backward(1, 1)};
  t.device_ops[1] = {Op::forward(0, 1), Op::forward(1, 0), Op::backward(1, 0), Op::backward(0, 1)};
  check_same(read_chakra_traces(as_files(write_chakra_traces(t))), t);

  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / "bubblesim_chakra_test";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::vector<std::string> traces = write_chakra_traces(t);
  for (std::size_t r = 0; r < traces.size(); ++r)
    std::ofstream(dir / chakra_file_name(static_cast<std::int32_t>(r)), std::ios::binary)
        << traces[r];
  check_same(read_chakra_folder(dir.string()), t);
  std::filesystem::remove(dir / chakra_file_name(0));
  CHECK_THROWS_AS(read_chakra_folder(dir.string()), InputError);
  std::filesystem::remove_all(dir);
}

TEST_CASE("truncated and corrupt traces are errors naming the file and byte") {
  std::vector<ChakraTraceFile> files = as_files(write_chakra_traces(two_stage_table()));
  const std::string whole = files[1].bytes;
  files[1].bytes.resize(whole.size() - 3);
  CHECK(first_error(files).rfind("bubblesim.1.et: error: byte ", 0) == 0);
  CHECK(first_error(files).find("is truncated") != std::string::npos);

  const std::size_t body = split_delimited_stream(whole).front().first;
  files[1].bytes = whole;
  files[1].bytes[body] = '\x0f';  // field 1 with wire type 7, which does not exist
  CHECK(first_error(files) == "bubblesim.1.et: error: byte " + std::to_string(body) +
                                  ": unsupported wire type 7 (field 1)");

  files[1].bytes = "";
  CHECK(first_error(files) ==
        "bubblesim.1.et: error: byte 0: the file is empty: a Chakra trace begins with a "
        "GlobalMetadata");
  // Only one rank's file: the metadata says two devices.
  files = as_files(write_chakra_traces(two_stage_table()));
  files.pop_back();
  CHECK(first_error(files).find("bubblesim.devices is 2 but there are 1 rank files") !=
        std::string::npos);
  // A compute node without bubblesim's attributes (not written by bubblesim).
  ProtoWriter node;
  node.varint(1, 99);
  node.varint(3, 4);
  std::string foreign = as_files(write_chakra_traces(two_stage_table()))[0].bytes;
  append_varint(foreign, node.bytes().size());
  const std::size_t at = foreign.size();
  foreign += node.bytes();
  files = as_files(write_chakra_traces(two_stage_table()));
  files[0].bytes = foreign;
  CHECK(first_error(files).rfind("bubblesim.0.et: error: byte " + std::to_string(at) +
                                     ": node 99 (a compute node) has no bubblesim.kind",
                                 0) == 0);
}
