#include "gpu/vmm/resource_snapshot.hpp"

#include "gpu/device/primary_context.hpp"
#include "util/open_fds.hpp"

namespace cumemctl {

namespace {

// The driver's own device files (/dev/nvidia*, the IMEX channel among them): the driver opens them when
// it first needs them and keeps them for the life of the process (seen on the H200: the channel node
// stays open after the first fabric allocation). They are not descriptors the command leaked.
bool driver_file(const std::string& target) {
    return target.rfind("/dev/nvidia", 0) == 0;
}

}  // namespace

ResourceSnapshot take_snapshot(const DriverApi& api) {
    ResourceSnapshot s;
    s.free_bytes = current_device_memory(api).free;
    for (auto& [fd, target] : open_fds()) {
        if (!driver_file(target)) s.fds.emplace(fd, std::move(target));
    }
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
