#include "tools/sweep/sweep_fingerprint.h"

#include <fmt/format.h>

#include "sim/units/text_file.h"

namespace bubblesim {

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

std::string sweep_fingerprint(const SweepSpec& spec, std::int64_t max_ops) {
  // Each part is preceded by its length, so moving bytes from one part to the next changes the
  // hash.
  std::uint64_t h = fnv1a64("bubblesim sweep fingerprint 1");
  auto add = [&h](std::string_view part) {
    h = fnv1a64(fmt::format("\n{}\n", part.size()), h);
    h = fnv1a64(part, h);
  };
  add(BUBBLESIM_VERSION);
  add(read_text_file(spec.file));
  add(read_text_file(spec.base_file));
  add(std::to_string(max_ops));
  return fmt::format("{:016x}", h);
}

std::string fingerprint_line(const std::string& fingerprint, std::int64_t shard_index,
                             std::int64_t shard_count) {
  std::string line = "# bubblesim sweep fingerprint=" + fingerprint;
  if (shard_count > 1) line += fmt::format(" shard={}/{}", shard_index, shard_count);
  return line + "\n";
}

}  // namespace bubblesim
