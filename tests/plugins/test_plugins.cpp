// Small plugins for the loader's tests, one MODULE per TEST_PLUGIN_KIND
// (tests/plugins/CMakeLists.txt):
//   good          a valid plugin, "test-good" (a tiny GPipe)
//   wrong_abi     the entry point reports ABI version 999
//   wrong_version built against bubblesim "0.0.0-other"
//   no_entry      exports no bubblesim_plugin_info at all
//   throws        registers one generator, then throws
//   collides      registers a generator named "1f1b", which is built in
//   bad_contract  a valid table but a wrong closed-form peak, so check-plugin must fail
#include <stdexcept>

#include "schedules/plugin_api.h"

namespace {

using namespace bubblesim;

Table fill_drain(const GeneratorInput& in) {
  if (in.devices < 1 || in.microbatches < 1)
    throw ScheduleConstraintError("needs p >= 1 and m >= 1");
  Table t;
  t.devices = t.stages = in.devices;
  t.microbatches = in.microbatches;
  t.placement = Placement::straight(in.devices);
  t.device_ops.resize(static_cast<std::size_t>(in.devices));
  for (std::int32_t r = 0; r < in.devices; ++r) {
    for (std::int32_t j = 0; j < in.microbatches; ++j)
      t.device_ops[static_cast<std::size_t>(r)].push_back(Op::forward(r, j));
    for (std::int32_t j = 0; j < in.microbatches; ++j)
      t.device_ops[static_cast<std::size_t>(r)].push_back(Op::backward(r, j));
  }
  return t;
}

Generator make(const char* name, double peak_offset) {
  return Generator{GeneratorInfo{name, "test plugin generator", "straight", "tests/plugins", {}},
                   fill_drain, [peak_offset](const GeneratorInput& in) {
                     Formula f;
                     f.peak_activation_units = in.microbatches + peak_offset;
                     return f;
                   }};
}

[[maybe_unused]] void register_good(Registrar& r) { r.add(make("test-good", 0)); }
[[maybe_unused]] void register_throws(Registrar& r) {
  r.add(make("test-throws-partial", 0));
  throw std::runtime_error("the test plugin refuses to register");
}
[[maybe_unused]] void register_collides(Registrar& r) { r.add(make("1f1b", 0)); }
[[maybe_unused]] void register_bad_contract(Registrar& r) { r.add(make("test-bad-contract", 1)); }

}  // namespace

#if TEST_PLUGIN_KIND_good
BUBBLESIM_PLUGIN("test-good", "0.1", register_good)
#elif TEST_PLUGIN_KIND_throws
BUBBLESIM_PLUGIN("test-throws", "0.1", register_throws)
#elif TEST_PLUGIN_KIND_collides
BUBBLESIM_PLUGIN("test-collides", "0.1", register_collides)
#elif TEST_PLUGIN_KIND_bad_contract
BUBBLESIM_PLUGIN("test-bad-contract", "0.1", register_bad_contract)
#elif TEST_PLUGIN_KIND_wrong_abi
extern "C" __attribute__((visibility("default"))) const BubblesimPluginInfo* bubblesim_plugin_info(
    void) {
  // Only the first field is meaningful to a host that finds an unknown ABI version.
  static constexpr BubblesimPluginInfo info{999u, "garbage", nullptr, nullptr, nullptr};
  return &info;
}
#elif TEST_PLUGIN_KIND_wrong_version
namespace {
void trampoline(Registrar* r) { register_good(*r); }
}  // namespace
extern "C" __attribute__((visibility("default"))) const BubblesimPluginInfo* bubblesim_plugin_info(
    void) {
  static constexpr BubblesimPluginInfo info{BUBBLESIM_PLUGIN_ABI_VERSION, "0.0.0-other",
                                            "test-wrong-version", "0.1", &trampoline};
  return &info;
}
#elif TEST_PLUGIN_KIND_no_entry
extern "C" __attribute__((visibility("default"))) int bubblesim_not_the_entry_point(void) {
  return 42;
}
#else
#error "TEST_PLUGIN_KIND_<kind> must be defined"
#endif
