#pragma once
// What a behaviour's file includes to declare itself (engine_component.h: the component interface
// and ComponentKind). The built-in list is generated from BUBBLESIM_BUILTIN_COMPONENTS in
// sim/engine/CMakeLists.txt, in the order the event loop calls them.

#include "sim/engine/engine_component.h"
