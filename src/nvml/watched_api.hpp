// NVML's table watched, as the driver's is (cuda/watched_api.hpp): every entry point names itself in the
// calling thread's PendingSlot while it runs, so that doctor's time budget can say which NVML call
// never returned. One watched table per process.
#pragma once

#include "nvml/nvml_api.hpp"

namespace cumemctl::nvml {

// A table whose entries are `real`'s, each behind a Pending scope of its symbol; null entries stay null.
Api watched_nvml_table(const Api& real);

}  // namespace cumemctl::nvml
