// The fake driver's current context, for entry points that need one.
#pragma once

#include <cstdint>

#include "fake_state.hpp"

namespace fake {

// The device whose primary context is current on this thread, or -1.
int current_context_device();

// The context current on this thread as it was set (a green context's included), or nullptr.
CUcontext current_context_handle();

// The device of a context handle (a primary or a green context), or -1 for a handle that names none.
int context_device(CUcontext ctx);

}  // namespace fake
