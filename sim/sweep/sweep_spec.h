#pragma once
// SweepSpec: a base scenario and axes over any of its keys (dotted paths), read from a sweep
// file:
//
//   base: base.yaml                  # relative to the sweep file
//   axes:
//     pipeline.stages: [2, 4, 8]                           # a list
//     pipeline.microbatches: {from: 8, to: 64, factor: 2}  # a geometric range
//     costs.forward: {from: 1, to: 4, step: 1, unit: ms}   # an arithmetic range (unit appended)
//     communication.delay: [0ms, 0.1ms, 1ms]
//   schedules: [gpipe, 1f1b]          # optional: replaces the base scenario's list
//   zip: [[pipeline.stages, parallelism.dp]]   # optional: axes that advance together
//   constraints: [parallelism.tp * pipeline.stages * parallelism.dp == 256]   # optional
//
// The points are the cross product of the axes, first axis slowest, numbered from 0. The axes of
// a `zip` group have as many values each and take their i-th values together: the group is one
// dimension of the product, placed where its first axis stands. `constraints` keep only the
// points where every expression (sim/sweep/key_expression.h) is true; the kept points are
// numbered from 0 in the same order.

#include <yaml-cpp/yaml.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "sim/sweep/key_expression.h"

namespace bubblesim {

struct SweepAxis {
  std::string path;                 // dotted key path into the scenario, e.g. "pipeline.stages"
  std::vector<YAML::Node> values;   // scalars or whole subtrees
  std::vector<std::string> labels;  // each value as written in the CSV
};

/// One `constraints:` entry: the expression and, per name it uses, where its value comes from.
struct SweepConstraint {
  std::shared_ptr<const KeyExpression> expression;
  /// Per name of expression->names(): the axis it reads (its values' numbers), or -1 for a key of
  /// the base scenario, whose number is then `constant`.
  std::vector<std::int32_t> axis;
  std::vector<double> constant;
};

struct SweepSpec {
  std::string file;       // the sweep file
  std::string base_file;  // the base scenario, resolved against the sweep file's folder
  YAML::Node base;        // its parsed tree
  std::vector<SweepAxis> axes;
  YAML::Node schedules;  // null unless the sweep overrides them
  /// The dimensions of the product, slowest first: each lists its axes (one, or a zip group).
  std::vector<std::vector<std::size_t>> dimensions;
  std::vector<SweepConstraint> constraints;
  /// With constraints: the index in the full product of every kept point, ascending.
  std::vector<std::int64_t> kept;

  std::int64_t point_count() const;
  /// The value index of each axis for point `index`.
  std::vector<std::size_t> coordinates(std::int64_t index) const;
  /// The base tree with the point's values written at their paths, as YAML text.
  std::string scenario_yaml(std::int64_t index) const;
};

/// Sets the key at dotted `path` of `tree` (a mapping) to a copy of `value`, creating the
/// mappings on the way and replacing a non-mapping found there.
void set_at_key_path(YAML::Node& tree, const std::string& path, const YAML::Node& value);

/// The node of `tree` at dotted `path`, or an undefined node when a key on the way is missing or
/// not a mapping (read-only: nothing is created).
YAML::Node at_key_path(const YAML::Node& tree, const std::string& path);

/// Reads and checks a sweep file (InputError with file:line:col on problems); refuses sweeps of
/// more than `max_points` points.
SweepSpec load_sweep(const std::string& path, std::int64_t max_points = 10'000'000);

}  // namespace bubblesim
