#pragma once
// Locating a sweep point's input errors where the user can fix them: an error on a key that an
// axis sets points at that axis's value in the sweep file; an error on another key points at the
// key in the base scenario (the point's YAML text is generated and has other line numbers).

#include <cstdint>

#include "sim/sweep/sweep_spec.h"
#include "sim/units/diagnostics.h"

namespace bubblesim {

/// `error` (from loading the scenario of `point`) with its diagnostics relocated as above.
InputError locate_point_error(const SweepSpec& spec, std::int64_t point, const InputError& error);

}  // namespace bubblesim
