// The driver table watched: every entry point of a copy of the table first names itself in the calling
// thread's PendingSlot (base/pending.hpp), then calls the real one; so that doctor's time budget can say
// which driver call never returned. One watched table per process (the real one is kept here).
#pragma once

#include "cuda/driver_api.hpp"

namespace cumemctl {

// A table whose entries are `real`'s, each behind a Pending scope of its name; null entries stay null.
// `real` is copied into the one slot the trampolines call through: a second call replaces it.
DriverApi watched_driver_table(const DriverApi& real);

}  // namespace cumemctl
