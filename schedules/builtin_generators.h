#pragma once
// The built-in generators: every generator under schedules/generators/ and the optimizer's
// `optimized`, registered through the list schedules/CMakeLists.txt generates
// (BUBBLESIM_BUILTIN_GENERATORS). The table model's Registry knows none of them by itself.

#include "schedules/generator.h"
#include "schedules/registry.h"

namespace bubblesim {

/// Adds every built-in generator to `registrar`, in the list's order.
void register_builtin_generators(Registrar& registrar);

/// A registry holding every built-in generator.
Registry builtin_registry();

}  // namespace bubblesim
