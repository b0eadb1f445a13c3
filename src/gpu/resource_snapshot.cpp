#include "gpu/resource_snapshot.hpp"

#include "gpu/primary_context.hpp"
#include "util/open_fds.hpp"

namespace cumemctl {

ResourceSnapshot take_snapshot(const DriverApi& api) {
    ResourceSnapshot s;
    s.free_bytes = current_device_memory(api).free;
    s.fds = open_fds();
    return s;
}

ResourceDelta compare(const ResourceSnapshot& before, const ResourceSnapshot& after) {
    ResourceDelta d;
    d.free_bytes = static_cast<std::int64_t>(after.free_bytes) - static_cast<std::int64_t>(before.free_bytes);
    d.fds = static_cast<std::int64_t>(after.fds.size()) - static_cast<std::int64_t>(before.fds.size());
    d.new_fds = new_fds(before.fds, after.fds);
    return d;
}

}  // namespace cumemctl
