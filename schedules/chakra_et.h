#pragma once
// Chakra execution traces (MLCommons Chakra, schema/protobuf/et_def.proto, version 0.0.4): one
// file per rank, `PREFIX.RANK.et`, as ASTRA-sim reads them. Each file is a stream of
// varint-length-prefixed protobuf messages: a GlobalMetadata, then Nodes.
//
// Written per rank, in the table's op order:
//   - one COMP_NODE per op, named like the table ("F3.12", "F3.12&B5.7"), ctrl_deps on the rank's
//     previous compute node, data_deps on its same-rank inputs and on the receives it waits for;
//     attributes is_cpu_op=false and bubblesim.kind (op letter), bubblesim.stage,
//     bubblesim.microbatch, and for a fused op bubblesim.backward_stage / backward_microbatch;
//   - a COMM_RECV_NODE before an op whose input comes from another rank and a COMM_SEND_NODE
//     after the op that produces it (comm_src / comm_dst / comm_tag / comm_size as ASTRA-sim
//     reads them; the tag is the same on both sides);
//   - start_time_micros / duration_micros from the given replay times, else 0.
// Inputs: F(s, j) <- F(s-1, j); B(s, j) <- B(s+1, j), F(s, j), R(s, j), L(s, j);
// W(s, j) <- B(s, j); R(s, j) <- F(s, j); O(s, j) <- F(s, j); L(s, j) <- O(s, j).
// GlobalMetadata carries the table's shape: bubblesim.devices, .rank, .stages, .chunks,
// .microbatches, .device_of_stage (replicas x stages, row by row), .replica_of_microbatch.
//
// Reading takes the compute nodes of each rank in file order back into a Table (communication
// nodes are skipped), so a written table reads back identical.

#include <cstdint>
#include <string>
#include <vector>

#include "schedules/table.h"
#include "schedules/table_csv.h"

namespace bubblesim {

/// The schema version written in GlobalMetadata.
inline constexpr const char* kChakraVersion = "0.0.4";

/// "bubblesim.RANK.et": the file name of a rank's trace.
std::string chakra_file_name(std::int32_t rank);

/// Per rank, the trace's bytes. `times` (may be empty) gives each op's start and end;
/// `bytes_of_stage` (may be empty) the size of the activation each stage sends (comm_size).
std::vector<std::string> write_chakra_traces(const Table& table, const OpTimes& times = {},
                                             const std::vector<std::int64_t>& bytes_of_stage = {});

/// One rank's trace as read: its file name (for messages) and bytes.
struct ChakraTraceFile {
  std::string file;
  std::string bytes;
};

/// Reads the traces of ranks 0..n-1 (in that order) into a Table. Throws InputError listing every
/// problem: FILE: error: byte OFFSET (node ID): what is wrong.
Table read_chakra_traces(const std::vector<ChakraTraceFile>& ranks);

/// Reads the folder `path`: its files PREFIX.0.et .. PREFIX.(n-1).et, one prefix, no gaps.
Table read_chakra_folder(const std::string& path);

}  // namespace bubblesim
