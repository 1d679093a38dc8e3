#include "sim/sweep/sweep_fingerprint.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <variant>

#include "sim/scenario/scenario_loader.h"
#include "sim/units/text_file.h"

namespace bubblesim {

std::uint64_t fnv1a64(std::string_view bytes, std::uint64_t hash) {
  for (unsigned char c : bytes) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

namespace {

namespace fs = std::filesystem;

// FNV-1a of a file's bytes, read in blocks (a table may be a GiB); a file that cannot be read
// hashes its error instead, so that a file appearing later changes the fingerprint.
std::uint64_t hash_file(const fs::path& path, std::uint64_t h) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return fnv1a64("unreadable", h);
  std::vector<char> block(std::size_t{1} << 20);
  while (in) {
    in.read(block.data(), static_cast<std::streamsize>(block.size()));
    h = fnv1a64(std::string_view(block.data(), static_cast<std::size_t>(in.gcount())), h);
  }
  return h;
}

// Whether a string parameter or axis value names a file or folder (relative to `base_dir`).
std::optional<std::string> existing_path(const std::string& text, const std::string& base_dir) {
  if (text.empty() || text.size() > 4096 || text.find('\0') != std::string::npos) return {};
  std::error_code ec;
  fs::path p(text);
  if (p.is_relative() && !base_dir.empty()) p = fs::path(base_dir) / p;
  if (!fs::exists(p, ec)) return {};
  return p.lexically_normal().string();
}

}  // namespace

std::vector<std::string> sweep_point_inputs(const SweepSpec& spec, const Registry& registry) {
  std::set<std::string> out;
  const std::string base_dir = scenario_base_dir(spec.base_file);
  auto load = [&](std::int64_t point) {
    try {
      const Scenario scenario =
          load_scenario_string(spec.scenario_yaml(point), spec.base_file, base_dir, registry);
      for (const ScheduleRequest& r : scenario.schedules) {
        for (const auto& [name, value] : r.params.all()) {
          if (const auto* text = std::get_if<std::string>(&value)) {
            if (auto path = existing_path(*text, base_dir)) out.insert(*path);
          }
        }
      }
    } catch (const std::exception&) {
      // An invalid point: its row says so; the files it read so far are still counted.
    }
  };
  if (spec.point_count() > 0) load(0);
  std::int64_t loads = 0;
  // Zipped axes and constraints decide which point takes a value first (SweepSpec).
  const std::vector<std::vector<std::int64_t>> first = spec.first_point_of_values();
  for (std::size_t a = spec.axes.size(); a-- > 0;) {
    const SweepAxis& axis = spec.axes[a];
    for (std::size_t v = 1; v < axis.values.size() && loads < kMaxFingerprintLoads; ++v) {
      const YAML::Node& value = axis.values[v];
      const bool names_file =
          !value.IsScalar() || existing_path(value.Scalar(), base_dir).has_value();
      if (!names_file || first[a][v] < 0) continue;
      load(first[a][v]);
      ++loads;
    }
  }
  std::error_code ec;
  const fs::path sweep = fs::weakly_canonical(spec.file, ec);
  const fs::path base = fs::weakly_canonical(spec.base_file, ec);
  for (const InputFileIdentity& f : input_files_read()) {
    const fs::path p = fs::weakly_canonical(f.path, ec);
    if (p != sweep && p != base) out.insert(f.path);
  }
  return {out.begin(), out.end()};
}

std::string sweep_fingerprint(const SweepSpec& spec, std::int64_t max_ops,
                              const std::vector<std::string>& inputs) {
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
  // Each input under its path as seen from the sweep file (the same from any working folder).
  std::error_code ec;
  const fs::path folder = fs::weakly_canonical(fs::absolute(spec.file, ec).parent_path(), ec);
  std::map<std::string, fs::path> files;  // shown path -> file, sorted
  for (const std::string& input : inputs) {
    const fs::path p = fs::weakly_canonical(fs::absolute(input, ec), ec);
    if (fs::is_directory(p, ec)) {
      for (const fs::directory_entry& e : fs::recursive_directory_iterator(p, ec)) {
        if (e.is_regular_file(ec)) files[e.path().lexically_relative(folder).string()] = e.path();
      }
    } else {
      files[p.lexically_relative(folder).string()] = p;
    }
  }
  for (const auto& [shown, path] : files) {
    add(shown);
    h = hash_file(path, h);
  }
  return fmt::format("{:016x}", h);
}

std::string fingerprint_line(const std::string& fingerprint, std::int64_t shard_index,
                             std::int64_t shard_count) {
  std::string line = "# bubblesim sweep fingerprint=" + fingerprint;
  if (shard_count > 1) line += fmt::format(" shard={}/{}", shard_index, shard_count);
  return line + "\n";
}

}  // namespace bubblesim
