#pragma once
// What a `run` or `compare` report shows besides the results: the width text must fit, the
// baseline of the speed-ups, and whether it is the compare form (the verdict and the level tables,
// fastest first) or the run form (the same plus every detail, in scenario order).

#include <cstddef>
#include <string>

namespace bubblesim {

struct ReportOptions {
  std::size_t width = 100;  // text: characters per line (the terminal's COLUMNS)
  std::string baseline;     // --baseline: a schedule label or name; "" = 1f1b when it ran
  bool compare = false;     // compare: the verdict and the level tables only, sorted by speed
};

}  // namespace bubblesim
