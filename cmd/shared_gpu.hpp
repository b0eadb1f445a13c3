// The frame's watch on a measurement (a command that declares Does::measures): the processes other than
// this one and its own second processes (ipc::started_here) that NVML lists on each measured GPU, sampled when the work
// starts, every 100 ms while it runs and when it ends, each named afterwards in a warning: a figure
// measured beside another process's work may be that work's doing. The list comes from the one
// judgement of a held GPU (gpu/device/held_device: holders_of). A command that SIGINT or SIGTERM stops
// names them too: the frame adds the warnings of the watches that the stop unwound.
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
    // Whether process `pid` seen on device `ordinal` is left out of the warning: one of the command's own
    // (a fabric-matrix job's other ranks), or one its report names already (doctor's busy results).
    using LeftOut = std::function<bool(int ordinal, unsigned pid)>;

    // Starts watching `devices` (CUDA ordinals, their UUIDs read through `api`), as `command` measures
    // them ("fabric-matrix rank 3": the warning says who saw whom). `nvml` outlives the watch. `ours`
    // is asked when the warnings are made, at the latest when the watch ends: what it reads must
    // outlive the watch.
    SharedGpuWatch(const DriverApi& api, const nvml::Library& nvml, const std::vector<int>& devices,
                   std::string command, LeftOut ours = {});
    // A watch that ends unreported (SIGINT or SIGTERM unwound past report_to) leaves its warnings to the
    // frame, which adds them to the stopped command's report (report_stopped_watches).
    ~SharedGpuWatch();
    SharedGpuWatch(const SharedGpuWatch&) = delete;
    SharedGpuWatch& operator=(const SharedGpuWatch&) = delete;

    // Samples a last time, stops, and warns in `report` for each device another process shared,
    // naming each process (held_by) in the order first seen, but those `ours` or `named_already` leave
    // out.
    void report_to(Report& report, const LeftOut& named_already = {});

    // Stops, and reports nothing, now or later (a failed measurement: the held-GPU judgement names the
    // holders in its error).
    void forget();

private:
    struct Watched {
        int ordinal = 0;
        std::string uuid;
        std::vector<GpuProcess> seen;
    };
    void sample();
    void stop();
    // The warnings: one for each device another process shared, but those left out.
    std::vector<Problem> warnings(const LeftOut& named_already);

    const nvml::Library& nvml_;
    std::string command_;
    LeftOut ours_;
    std::vector<Watched> devices_;
    bool reported_ = false;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool stopping_ = false;
    std::thread thread_;
};

// The frame's end of a command (run_guarded): where SIGINT or SIGTERM stopped it (exit 130 or 143),
// adds to `report` the warnings of each watch that ended without reporting, so that the report of what
// was done still names who shared the GPU; forgets them either way.
void report_stopped_watches(Report& report);

}  // namespace cumemctl::cmd
