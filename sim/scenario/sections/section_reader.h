#pragma once
// The scenario file's section readers: one per top-level key (or small group of keys read
// together), each in its own file in this folder, run in the order of section_readers().
//
// Adding a section: write `void read_NAME_section(LoadContext&, Scenario&)` in NAME_section.cpp
// (with its header and tests), then add one line to the list in section_readers.cpp. The loader
// builds the allowed top-level keys from that list, so an unregistered key stays an error.

#include <string>
#include <vector>

#include "sim/scenario/scenario.h"
#include "sim/scenario/sections/load_context.h"

namespace bubblesim {

using SectionReadFunction = void (*)(LoadContext& context, Scenario& scenario);

struct SectionReader {
  std::vector<std::string> keys;  // the top-level keys it reads
  SectionReadFunction read;
};

/// Every section reader, in reading order: a reader may use what earlier readers put into the
/// Scenario (the pipeline size, the model, the topology and placement).
const std::vector<SectionReader>& section_readers();

}  // namespace bubblesim
