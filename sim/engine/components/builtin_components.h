#pragma once
// The built-in engine behaviours (engine_component.h), one file each in this folder; their order
// in builtin_components() is the order the event loop calls them.

#include "sim/engine/engine_component.h"

namespace bubblesim {

ComponentKind gradient_sync_component();    // gradient_sync_component.cpp: the iteration end
ComponentKind expert_exchange_component();  // expert_exchange_component.cpp: MoE all-to-all
ComponentKind send_hold_component();        // send_hold.cpp: blocking p2p holds the sender
ComponentKind host_gap_component();         // host_gap.cpp: the host gap after a blocking call

}  // namespace bubblesim
