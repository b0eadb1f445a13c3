// The fake driver (tests/fakecuda) loaded through the real seam, for unit tests of core code that
// launches work or maps memory: Driver::load on the built libfakecuda.so, devices from a profile.
#pragma once

#include "cuda/driver.hpp"

namespace testing_driver {

// The fake driver with the gb200x4 profile (four devices), loaded and initialised once per process.
// FAKECUDA_INJECT is cleared first: tests inject failures through hooked_api.hpp instead.
cumemctl::Driver& fake_driver();

// Makes device `ordinal`'s primary context current on the calling thread (retained once per device
// for the life of the process).
void use_fake_device(int ordinal);

// Free bytes of the current context's device (cuMemGetInfo), to show that nothing leaked.
std::size_t fake_free_memory();

}  // namespace testing_driver
