#include "sim/sweep/sweep_fingerprint.h"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>

#include "sim/costmodel/presets.h"
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

/// Every scalar of `value` (an axis value: a scalar or a subtree) that names an existing file or
/// folder, relative to `base_dir` as the loader resolves it, into `paths`; every scalar into
/// `words` (a schedule an axis names).
void add_named_paths(const YAML::Node& value, const std::string& base_dir,
                     std::set<std::string>& words, std::set<std::string>& paths) {
  if (value.IsScalar()) {
    words.insert(value.Scalar());
    if (auto path = existing_path(value.Scalar(), base_dir)) paths.insert(*path);
    return;
  }
  if (value.IsSequence()) {
    for (const YAML::Node& e : value) add_named_paths(e, base_dir, words, paths);
  } else if (value.IsMap()) {
    for (const auto& kv : value) add_named_paths(kv.second, base_dir, words, paths);
  }
}

/// The file a generator came from, from its registry origin: "plugin PATH (version V)" (a C++
/// plugin) or "python: NAME at FILE:LINE" (bubblesim.register_generator); empty for a built-in
/// or a Python function without a source file.
std::string origin_file(const std::string& origin) {
  constexpr std::string_view kPlugin = "plugin ", kPython = "python: ";
  if (origin.rfind(kPlugin, 0) == 0) {
    const std::size_t end = origin.rfind(" (version ");
    return origin.substr(kPlugin.size(), end == std::string::npos ? end : end - kPlugin.size());
  }
  if (origin.rfind(kPython, 0) != 0) return {};
  const std::size_t at = origin.rfind(" at ");
  if (at == std::string::npos) return {};
  std::string file = origin.substr(at + 4);
  const std::size_t colon = file.rfind(':');
  if (colon != std::string::npos && colon + 1 < file.size() &&
      file.find_first_not_of("0123456789", colon + 1) == std::string::npos)
    file.resize(colon);
  std::error_code ec;
  return fs::is_regular_file(file, ec) ? file : std::string();
}

}  // namespace

std::vector<std::string> sweep_point_inputs(const SweepSpec& spec, const Registry& registry) {
  std::set<std::string> out;
  std::set<std::string> generators;  // the schedules the points may run
  const std::string base_dir = scenario_base_dir(spec.base_file);
  if (spec.point_count() > 0) {
    // Point 0's scenario: every file it names (topology, profile, from-file's tables), read from
    // its text rather than from what this process happens to have read before.
    const YAML::Node point = YAML::Load(spec.scenario_yaml(0));
    std::set<std::string> words;
    add_named_paths(point, base_dir, words, out);
    generators.insert(words.begin(), words.end());
    // Without `schedules:` every registered generator runs.
    try {
      const Scenario scenario =
          load_scenario_string(spec.scenario_yaml(0), spec.base_file, base_dir, registry);
      for (const ScheduleRequest& r : scenario.schedules) generators.insert(r.name);
    } catch (const std::exception&) {
      // An invalid point: its row says so.
    }
  }
  // Every other point differs from point 0 only in its axis values: every file one of them names
  // (a scalar, or a scalar inside a subtree) is what the other points read. A stat per value, no
  // scenario load, so every value of every axis is covered at any sweep size.
  for (const SweepAxis& axis : spec.axes) {
    for (const YAML::Node& value : axis.values) add_named_paths(value, base_dir, generators, out);
  }
  // The generators the points run that came from plugins (C++ .so files, Python files): a
  // changed plugin reruns the points. Plugins the sweep does not use are not part of it (a Python
  // process may have registered others).
  for (const std::string& name : registry.names()) {
    if (!generators.count(name)) continue;
    const std::string file = origin_file(registry.origin(name));
    if (!file.empty()) out.insert(file);
  }
  std::error_code ec;
  const fs::path sweep = fs::weakly_canonical(spec.file, ec);
  const fs::path base = fs::weakly_canonical(spec.base_file, ec);
  for (auto it = out.begin(); it != out.end();) {
    const fs::path p = fs::weakly_canonical(*it, ec);
    it = p == sweep || p == base ? out.erase(it) : std::next(it);
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
  // The built-in presets: a build whose preset data differ (a corrected datasheet value) derives
  // other costs from the same sweep file.
  const Presets& presets = Presets::builtin();
  for (const auto& [kind, names] : {std::pair{PresetKind::Model, &presets.model_names()},
                                    std::pair{PresetKind::Gpu, &presets.gpu_names()},
                                    std::pair{PresetKind::Framework, &presets.framework_names()}}) {
    for (const std::string& name : *names) {
      const std::optional<YamlNode> node = kind == PresetKind::Model ? presets.model(name)
                                           : kind == PresetKind::Gpu ? presets.gpu(name)
                                                                     : presets.framework(name);
      add(name);
      add(node ? YAML::Dump(node->raw()) : std::string());
    }
  }
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
