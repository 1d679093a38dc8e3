#pragma once
// Times in the HTML reports' unit: microseconds as a double (picoseconds / 1e6), shared by the
// page writer and its views so that every number on a page comes from the same division.

#include "sim/units/time.h"

namespace bubblesim {

inline double html_us(Time t) { return static_cast<double>(t.ps()) / 1e6; }

}  // namespace bubblesim
