#pragma once
// The shape of a sweep's point set beyond the plain cross product (sweep_spec.h): `zip` groups,
// axes that advance together as one dimension, and `constraints`, expressions every kept point
// satisfies. Read by load_sweep after the axes; problems are diagnostics at the entry that has
// them (the zip group, the constraint, the axis value that is not a number).

#include <cstdint>

#include "sim/sweep/sweep_spec.h"
#include "sim/units/yaml_reader.h"

namespace bubblesim {

/// Fills spec.dimensions: one per axis, except that the axes of each group of `zip` (a list of
/// lists of axis paths; absent: none) form one, placed at its first axis.
void read_sweep_zip(const std::optional<YamlNode>& zip, SweepSpec& spec, DiagnosticList& d);

/// Parses `constraints` (a list of expression strings; absent: none) into spec.constraints,
/// binding each name to an axis, a short name of one (`tp`, `pp`: sweep-files.md) or a numeric key
/// of the base scenario. Needs spec.base.
void read_sweep_constraints(const std::optional<YamlNode>& constraints, SweepSpec& spec,
                            DiagnosticList& d);

/// With constraints, spec.kept: every point of the product they all hold for. Throws InputError
/// (at `where`, the constraints' list) when none is left, or when an expression divides by zero
/// at a point (naming it).
void keep_constrained_points(SweepSpec& spec, const SourceLocation& where);

}  // namespace bubblesim
