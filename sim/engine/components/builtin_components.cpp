#include "sim/engine/components/builtin_components.h"

#include <array>

namespace bubblesim {

// The registration: one line per behaviour. At equal points of an op's life the loop calls them
// in this order, and a refused shortcut names the first that refuses it.
std::span<const ComponentKind> builtin_components() {
  static const std::array<ComponentKind, 4> kinds{
      gradient_sync_component(),
      expert_exchange_component(),
      send_hold_component(),
      host_gap_component(),
  };
  return kinds;
}

}  // namespace bubblesim
