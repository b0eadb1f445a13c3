#include "gpu/vmm/resource_snapshot.hpp"

#include "cuda/owned_handle.hpp"
#include "gpu/device/primary_context.hpp"
#include "util/open_fds.hpp"

#include <algorithm>
#include <array>
#include <string_view>

namespace cumemctl::gpu {

namespace {

// The driver's own device files (/dev/nvidia*, the IMEX channel among them): the driver opens them when
// it first needs them and keeps them for the life of the process (seen on the H200: the channel node
// stays open after the first fabric allocation). They are not descriptors the command leaked.
bool driver_file(const std::string& target) {
    return target.rfind("/dev/nvidia", 0) == 0;
}

// The steps that give back something this process made: by driver call, or by the step's name where
// the step is an attempt that names no call (create --pool's "free" and "destroy pool").
bool release_step(const steps::Step& s) {
    static constexpr std::array<std::string_view, 6> kCalls{"cuMemRelease", "cuMemUnmap",     "cuMemAddressFree",
                                                            "cuMemFree",    "cuMemFreeAsync", "cuMemPoolDestroy"};
    static constexpr std::array<std::string_view, 5> kNames{"release", "unmap", "free-address", "free", "destroy pool"};
    return s.undo || std::find(kCalls.begin(), kCalls.end(), s.call) != kCalls.end() ||
           std::find(kNames.begin(), kNames.end(), s.name) != kNames.end();
}

// Steps of this process: none stamped (create) or stamped as the exporter (create --pool); a second
// process's own steps (the importer's) are its business, and it is gone when they are reported.
bool own_step(const steps::Step& s) {
    return s.process.empty() || s.process == "exporter";
}

}  // namespace

ResourceSnapshot take_snapshot(const DriverApi& api) {
    ResourceSnapshot s;
    s.free_bytes = current_device_memory(api).free;
    s.lost_handles = lost_handle_count();
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
    d.lost_handles = after.lost_handles - before.lost_handles;
    return d;
}

std::vector<std::string> failed_releases(const std::vector<steps::Step>& steps) {
    std::vector<std::string> failed;
    for (const auto& s : steps) {
        if (s.ok || !own_step(s) || !release_step(s)) continue;
        const std::string what = s.call.empty() ? s.name : s.call;
        failed.push_back(s.result_name.empty() ? what : what + " (" + s.result_name + ")");
    }
    return failed;
}

}  // namespace cumemctl::gpu
