// `table --format chakra -o DIR` writes one Chakra trace per rank; `from-file` with
// `format: chakra` reads the folder back to the same replay; a damaged trace is exit 2 naming the
// file and byte.
#include <doctest/doctest.h>

#include <filesystem>

#include "cli_support.h"

namespace fs = std::filesystem;

using namespace bubblesim::cli_testing;

namespace {

/// The quickstart with its schedules replaced by from-file reading the folder `traces`.
std::string import_scenario(const fs::path& dir, const std::string& traces) {
  std::string yaml = slurp(source("scenarios/quickstart.yaml"));
  yaml = yaml.substr(0, yaml.find("schedules:")) +
         "schedules: [{name: from-file, params: {path: " + traces + ", format: chakra}}]\n";
  const fs::path file = dir / "imported.yaml";
  std::ofstream(file) << yaml;
  return file.string();
}

}  // namespace

TEST_CASE("table --format chakra exports one trace per rank and from-file imports the folder") {
  const fs::path dir = fs::temp_directory_path() / fmt_name();
  fs::create_directories(dir);
  const std::string imported = import_scenario(dir, "traces");
  for (const char* schedule : {"gpipe", "1f1b"}) {
    CAPTURE(schedule);
    fs::remove_all(dir / "traces");
    Result out = run(std::string("table scenarios/quickstart.yaml --format chakra --schedule ") +
                     schedule + " -o '" + (dir / "traces").string() + "'");
    REQUIRE(out.code == 0);
    CHECK(out.out.empty());
    CHECK(out.err.find("bubblesim.0.et (Chakra execution trace of rank 0)") != std::string::npos);
    CHECK(fs::exists(dir / "traces" / "bubblesim.0.et"));
    CHECK(fs::exists(dir / "traces" / "bubblesim.1.et"));
    Result a =
        run(std::string("table scenarios/quickstart.yaml --format csv --schedule ") + schedule);
    Result b = run("table '" + imported + "' --format csv --schedule from-file");
    REQUIRE(a.code == 0);
    REQUIRE(b.code == 0);
    CHECK(a.out == b.out);  // same ops, same idealized start and end times
  }
  // A truncated trace: exit 2, the file and the byte where it breaks.
  const fs::path rank1 = dir / "traces" / "bubblesim.1.et";
  fs::resize_file(rank1, fs::file_size(rank1) - 2);
  Result bad = run("table '" + imported + "' --format csv --schedule from-file");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("bubblesim.1.et: error: byte ") != std::string::npos);
  // A folder is required.
  Result no_dir = run("table scenarios/quickstart.yaml --format chakra --schedule 1f1b");
  CHECK(no_dir.code == 2);
  CHECK(no_dir.err.find("--format chakra: needs -o DIR") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("table --format chakra checks every rank's path before it writes any") {
  // The scenario itself named as rank 2's trace: the export would overwrite its input. Refused
  // before ranks 0 and 1 are written, so nothing is left half-exported.
  const fs::path dir = fs::temp_directory_path() / (fmt_name() + "_inputs");
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path scenario = dir / "bubblesim.2.et";
  fs::copy_file(source("scenarios/quickstart.yaml"), scenario);
  Result r = run("table '" + scenario.string() + "' --format chakra --schedule 1f1b -o '" +
                 dir.string() + "'");
  CHECK(r.code == 2);
  CHECK(r.err.find("bubblesim.2.et") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "bubblesim.0.et"));
  CHECK_FALSE(fs::exists(dir / "bubblesim.1.et"));
  CHECK(slurp(scenario.string()) == slurp(source("scenarios/quickstart.yaml")));
  fs::remove_all(dir);
}
