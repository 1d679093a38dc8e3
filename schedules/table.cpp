#include "schedules/table.h"

#include <algorithm>
#include <numeric>

namespace bubblesim {

Placement Placement::straight(std::int32_t stages) {
  Placement p;
  p.device_of_stage.emplace_back(static_cast<std::size_t>(stages));
  std::iota(p.device_of_stage[0].begin(), p.device_of_stage[0].end(), 0);
  return p;
}

Placement Placement::loop(std::int32_t devices, std::int32_t stages) {
  Placement p;
  p.device_of_stage.emplace_back(static_cast<std::size_t>(stages));
  for (std::int32_t s = 0; s < stages; ++s)
    p.device_of_stage[0][static_cast<std::size_t>(s)] = s % devices;
  return p;
}

Placement Placement::v_shape(std::int32_t devices) {
  Placement p;
  p.device_of_stage.emplace_back(static_cast<std::size_t>(2 * devices));
  for (std::int32_t s = 0; s < 2 * devices; ++s) {
    p.device_of_stage[0][static_cast<std::size_t>(s)] = s < devices ? s : 2 * devices - 1 - s;
  }
  return p;
}

std::vector<std::int32_t> Placement::stages_held_by(std::int32_t device) const {
  std::vector<std::int32_t> stages;
  for (const auto& map : device_of_stage) {
    for (std::size_t s = 0; s < map.size(); ++s) {
      if (map[s] == device) stages.push_back(static_cast<std::int32_t>(s));
    }
  }
  std::sort(stages.begin(), stages.end());
  stages.erase(std::unique(stages.begin(), stages.end()), stages.end());
  return stages;
}

std::vector<std::vector<std::int32_t>> Placement::stages_by_device(std::int32_t devices) const {
  std::vector<std::vector<std::int32_t>> held(static_cast<std::size_t>(std::max(devices, 0)));
  for (const auto& map : device_of_stage) {
    for (std::size_t s = 0; s < map.size(); ++s) {
      if (map[s] >= 0 && map[s] < devices)
        held[static_cast<std::size_t>(map[s])].push_back(static_cast<std::int32_t>(s));
    }
  }
  for (auto& stages : held) {
    std::sort(stages.begin(), stages.end());
    stages.erase(std::unique(stages.begin(), stages.end()), stages.end());
  }
  return held;
}

std::vector<std::int32_t> Placement::holders_of(std::int32_t stage) const {
  std::vector<std::int32_t> devices;
  for (const auto& map : device_of_stage) {
    if (stage >= 0 && static_cast<std::size_t>(stage) < map.size())
      devices.push_back(map[static_cast<std::size_t>(stage)]);
  }
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  return devices;
}

Table Table::empty(std::int32_t devices, std::int32_t chunks, std::int32_t microbatches,
                   Placement placement) {
  Table t;
  t.devices = devices;
  t.stages = devices * chunks;
  t.chunks = chunks;
  t.microbatches = microbatches;
  t.placement = std::move(placement);
  t.device_ops.resize(static_cast<std::size_t>(std::max(devices, 0)));
  return t;
}

std::size_t Table::op_count() const {
  std::size_t n = 0;
  for (const auto& ops : device_ops) n += ops.size();
  return n;
}

bool Table::has_weight_op(std::int32_t stage, std::int32_t microbatch) const {
  for (const auto& ops : device_ops) {
    for (const Op& op : ops) {
      if (op.kind == OpKind::Weight && op.stage == stage && op.microbatch == microbatch)
        return true;
    }
  }
  return false;
}

}  // namespace bubblesim
