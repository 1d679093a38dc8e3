#pragma once
// The fingerprint of a sweep: what its rows depend on, hashed, written as the first line of its
// CSV so that --resume and merge can tell whether a file was written by the same sweep:
//
//   # bubblesim sweep fingerprint=0123456789abcdef[ shard=I/N]
//
// CSV readers skip it as a comment (pandas: comment='#'; Python's csv module: skip lines that
// start with '#'; the sweep plot and merge skip it).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "schedules/registry.h"
#include "sim/sweep/sweep_spec.h"

namespace bubblesim {

/// FNV-1a 64 of `bytes`, continuing from `hash`.
std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash = 0xcbf29ce484222325ULL);

/// 16 hex digits of the hash of the tool version, the built-in presets (every model, GPU and
/// framework preset's values), the sweep file's bytes, its base scenario's bytes, the --max-ops
/// limit (which decides which points are invalid rows) and the content of each file of `inputs`
/// (with its path relative to the sweep file's folder; a folder: its files), so that --resume
/// reruns the points when a file they read changed.
std::string sweep_fingerprint(const SweepSpec& spec, std::int64_t max_ops,
                              const std::vector<std::string>& inputs = {});

/// The files the sweep's points read besides the sweep file and its base: every file or folder a
/// scalar of point 0's scenario names (topology, profile, from-file's tables) and every file or
/// folder any value of any axis names (a scalar, or a scalar inside a subtree; a stat each, no
/// limit on the values), relative to the base's folder as the loader resolves them; and the file
/// of every generator the points run that came from a plugin (a C++ .so or a Python file).
/// Sorted, each once; the same in every process (not what a process happened to read before).
std::vector<std::string> sweep_point_inputs(const SweepSpec& spec, const Registry& registry);

/// The first line of the CSV, with its newline; shard I/N is named when N > 1.
std::string fingerprint_line(const std::string& fingerprint, std::int64_t shard_index,
                             std::int64_t shard_count);

/// Whether `line` (without its newline) is a comment line of a sweep CSV.
inline bool is_sweep_comment(std::string_view line) { return !line.empty() && line[0] == '#'; }

}  // namespace bubblesim
