// The frame's watch on a measurement (a command that declares Does::measures): the processes other than
// this one and its own second processes (ipc::started_here) that NVML lists on each measured GPU, sampled when the work
// starts, every 100 ms while it runs and when it ends, each named afterwards in a warning: a figure
// measured beside another process's work may be that work's doing. The list comes from the one
// judgement of a held GPU (gpu/device/held_device: holders_of).
#pragma once

#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cuda/driver_api.hpp"
#include "nvml/nvml.hpp"
#include "report/report.hpp"

namespace cumemctl::cmd {

class SharedGpuWatch {
public:
    // Starts watching `devices` (CUDA ordinals, their UUIDs read through `api`), as `command` measures
    // them. `nvml` outlives the watch.
    SharedGpuWatch(const DriverApi& api, const nvml::Library& nvml, const std::vector<int>& devices,
                   std::string command);
    ~SharedGpuWatch();
    SharedGpuWatch(const SharedGpuWatch&) = delete;
    SharedGpuWatch& operator=(const SharedGpuWatch&) = delete;

    // Whether the command's own report names process `pid` on device `ordinal` already (doctor's busy
    // results): the warning leaves it out.
    using NamedAlready = std::function<bool(int ordinal, unsigned pid)>;

    // Samples a last time, stops, and warns in `report` for each device another process shared,
    // naming each process (held_by) in the order first seen, but those `named_already` names.
    void report_to(Report& report, const NamedAlready& named_already = {});

private:
    struct Watched {
        int ordinal = 0;
        std::string uuid;
        std::vector<GpuProcess> seen;
    };
    void sample();
    void stop();

    const nvml::Library& nvml_;
    std::string command_;
    std::vector<Watched> devices_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

}  // namespace cumemctl::cmd
