#include "shared_gpu.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "gpu/device/device_selector.hpp"
#include "gpu/device/held_device.hpp"
#include "ipc/process.hpp"
#include "util/text_file.hpp"

namespace cumemctl::cmd {
namespace {

constexpr auto kEvery = std::chrono::milliseconds(100);

// Whether `pid` is this command's own: a second process that it started (ipc::Process: an importer, a
// fabric-matrix rank), or a child of this process as /proc/PID/stat says; false where neither tells
// (NVML's pids are the host's).
bool child_of_mine(unsigned pid) {
    if (ipc::started_here(static_cast<pid_t>(pid))) return true;
    const auto stat = try_read_text_file(fmt::format("/proc/{}/stat", pid));
    if (!stat) return false;
    const auto close = stat->rfind(')');
    if (close == std::string::npos) return false;
    int ppid = 0;
    char state = 0;
    if (std::sscanf(stat->c_str() + close + 1, " %c %d", &state, &ppid) != 2) return false;
    return ppid == ::getpid();
}

// The warnings of the watches that ended unreported, for the frame (report_stopped_watches). A watch
// may end on another thread than the frame's (doctor's run has one of its own).
std::mutex unreported_mutex;
std::vector<Problem> unreported;

}  // namespace

SharedGpuWatch::SharedGpuWatch(const DriverApi& api, const nvml::Library& nvml, const std::vector<int>& devices,
                               std::string command, LeftOut ours)
    : nvml_(nvml), command_(std::move(command)), ours_(std::move(ours)) {
    for (const int d : devices) devices_.push_back({d, gpu::device_identity(api, d, &nvml).uuid, {}});
    sample();
    thread_ = std::thread([this] {
        std::unique_lock<std::mutex> lock(mutex_);
        while (!wake_.wait_for(lock, kEvery, [this] { return stopping_; })) {
            lock.unlock();
            sample();
            lock.lock();
        }
    });
}

SharedGpuWatch::~SharedGpuWatch() {
    stop();
    if (reported_) return;
    try {
        std::vector<Problem> left = warnings({});
        const std::lock_guard<std::mutex> lock(unreported_mutex);
        for (Problem& w : left) unreported.push_back(std::move(w));
    } catch (...) {
        // A destructor throws nothing: out of memory, the warnings are lost, not the run.
    }
}

void SharedGpuWatch::forget() {
    stop();
    reported_ = true;
}

void SharedGpuWatch::stop() {
    {
        const std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
}

void SharedGpuWatch::sample() {
    for (Watched& w : devices_) {
        const gpu::HeldDevice held = gpu::holders_of(&nvml_, w.uuid, {::getpid()});
        const std::lock_guard<std::mutex> lock(mutex_);
        for (const GpuProcess& p : held.holders) {
            const bool known =
                std::any_of(w.seen.begin(), w.seen.end(), [&p](const GpuProcess& q) { return q.pid == p.pid; });
            if (!known && !child_of_mine(p.pid)) w.seen.push_back(p);
        }
    }
}

void SharedGpuWatch::report_to(Report& report, const LeftOut& named_already) {
    stop();
    sample();
    reported_ = true;
    for (Problem& w : warnings(named_already)) report.warnings.push_back(std::move(w));
}

std::vector<Problem> SharedGpuWatch::warnings(const LeftOut& named_already) {
    std::vector<Problem> out;
    for (Watched& w : devices_) {
        std::erase_if(w.seen, [&](const GpuProcess& p) {
            return (ours_ && ours_(w.ordinal, p.pid)) || (named_already && named_already(w.ordinal, p.pid));
        });
        if (w.seen.empty()) continue;
        const std::size_t n = w.seen.size();
        Problem warning{.exit_code = ExitCode::ok,
                        .message = fmt::format("GPU {}: {} shared the GPU while {} measured it: {}", w.ordinal,
                                               n == 1 ? "another process" : fmt::format("{} other processes", n),
                                               command_, gpu::holders_sentence(w.seen)),
                        .remedy =
                            "the figures may be lower than the GPU gives: measure again when the GPU is idle "
                            "(nvidia-smi lists its processes)",
                        .device = w.ordinal};
        warning.held_by = w.seen;
        out.push_back(std::move(warning));
    }
    return out;
}

void report_stopped_watches(Report& report) {
    std::vector<Problem> left;
    {
        const std::lock_guard<std::mutex> lock(unreported_mutex);
        left.swap(unreported);
    }
    if (report.exit_code != ExitCode::interrupted && report.exit_code != ExitCode::terminated) return;
    for (Problem& w : left) report.warnings.push_back(std::move(w));
}

}  // namespace cumemctl::cmd
