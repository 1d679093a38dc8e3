#pragma once
// Field numbers and enum values of Chakra's et_def.proto used by the trace writer and reader
// (chakra_et.h), and the names of bubblesim's own attributes.

#include <cstdint>

namespace bubblesim::chakra {

// message GlobalMetadata
inline constexpr std::uint32_t kMetaVersion = 1, kMetaAttr = 2;
// message Node
inline constexpr std::uint32_t kNodeId = 1, kNodeName = 2, kNodeType = 3, kNodeCtrlDeps = 4,
                               kNodeDataDeps = 5, kNodeStart = 6, kNodeDuration = 7, kNodeAttr = 10;
// message AttributeProto (value is a oneof; these are the members used here)
inline constexpr std::uint32_t kAttrName = 1, kAttrInt32 = 7, kAttrInt64 = 9, kAttrInt64List = 10,
                               kAttrBool = 27, kAttrString = 29;
// message Int64List
inline constexpr std::uint32_t kListValues = 1;

// enum NodeType
inline constexpr std::uint64_t kCompNode = 4, kSendNode = 5, kRecvNode = 6;

inline constexpr const char* kKind = "bubblesim.kind";
inline constexpr const char* kStage = "bubblesim.stage";
inline constexpr const char* kMicrobatch = "bubblesim.microbatch";
inline constexpr const char* kBackwardStage = "bubblesim.backward_stage";
inline constexpr const char* kBackwardMicrobatch = "bubblesim.backward_microbatch";
inline constexpr const char* kDevices = "bubblesim.devices";
inline constexpr const char* kRank = "bubblesim.rank";
inline constexpr const char* kStages = "bubblesim.stages";
inline constexpr const char* kChunks = "bubblesim.chunks";
inline constexpr const char* kMicrobatches = "bubblesim.microbatches";
inline constexpr const char* kDeviceOfStage = "bubblesim.device_of_stage";
inline constexpr const char* kReplicaOfMicrobatch = "bubblesim.replica_of_microbatch";

}  // namespace bubblesim::chakra
