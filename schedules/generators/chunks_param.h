#pragma once
// The `chunks` parameter of the generators that place several model chunks per device
// (interleaved 1F1B, looped BFS): default 2.

#include <cstdint>

#include "schedules/generator.h"

namespace bubblesim {

inline constexpr std::int64_t kDefaultChunks = 2;

inline std::int32_t chunks_of(const GeneratorInput& in) {
  return static_cast<std::int32_t>(in.params.has("chunks") ? in.params.integer("chunks")
                                                           : kDefaultChunks);
}

}  // namespace bubblesim
