#include "cuda/watched_api.hpp"

#include "base/pending.hpp"

namespace cumemctl {
namespace {

DriverApi real_table{};

#define CUMEMCTL_ENTRY_NAME(name, version, required) constexpr char name##_name[] = #name;
CUMEMCTL_DRIVER_ENTRY_POINTS(CUMEMCTL_ENTRY_NAME)
#undef CUMEMCTL_ENTRY_NAME

}  // namespace

DriverApi watched_driver_table(const DriverApi& real) {
    real_table = real;
    DriverApi out = real;
#define CUMEMCTL_WATCH_ENTRY(name, version, required) \
    if (real.name != nullptr)                         \
        out.name = &WatchedCall<&real_table, PFN_##name##_v##version>::call<&DriverApi::name, name##_name>;
    CUMEMCTL_DRIVER_ENTRY_POINTS(CUMEMCTL_WATCH_ENTRY)
#undef CUMEMCTL_WATCH_ENTRY
    return out;
}

}  // namespace cumemctl
