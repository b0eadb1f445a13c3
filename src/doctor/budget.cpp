#include "doctor/budget.hpp"

#include <chrono>
#include <exception>
#include <future>
#include <thread>

#include <fmt/format.h>

#include "ipc/process.hpp"
#include "util/stopwatch.hpp"

namespace cumemctl::doctor {
namespace {

// The lane of the calling thread, for the one Progress it works for.
thread_local void* lane_owner = nullptr;
thread_local void* lane_of_thread = nullptr;

double seconds_since(std::int64_t since_ns) {
    return static_cast<double>(pending_clock_ns() - since_ns) / 1e9;
}

const char* kTimeoutRemedy =
    "the GPU or its driver does not answer: look for Xid errors (dmesg | grep -i xid) and at nvidia-smi; drain the "
    "node and reset the GPU (nvidia-smi -r) or reboot it";

}  // namespace

void Progress::plan(std::vector<std::string> setup, std::vector<std::string> device, std::vector<std::string> node) {
    const std::lock_guard<std::mutex> lock(mutex_);
    setup_ = std::move(setup), device_ = std::move(device), node_ = std::move(node);
}

void Progress::set_devices(std::vector<int> devices, int device_count) {
    const std::lock_guard<std::mutex> lock(mutex_);
    devices_ = std::move(devices);
    device_count_ = device_count;
    devices_known_ = true;
}

void Progress::set_driver_version(std::string version) {
    const std::lock_guard<std::mutex> lock(mutex_);
    driver_version_ = std::move(version);
}

void Progress::set_identities(std::vector<gpu::DeviceIdentity> identities) {
    const std::lock_guard<std::mutex> lock(mutex_);
    identities_ = std::move(identities);
}

void Progress::set_driver(const DriverInfo& info) {
    const std::lock_guard<std::mutex> lock(mutex_);
    driver_ = info;
}

std::optional<DriverInfo> Progress::driver() const {
    const std::lock_guard<std::mutex> lock(mutex_);
    return driver_;
}

Progress::Lane& Progress::lane() {
    if (lane_owner != this || lane_of_thread == nullptr) {
        const std::lock_guard<std::mutex> lock(mutex_);
        lanes_.push_back(std::make_unique<Lane>());
        lane_owner = this;
        lane_of_thread = lanes_.back().get();
        watch_this_thread(&lanes_.back()->slot);
    }
    return *static_cast<Lane*>(lane_of_thread);
}

void Progress::begin(const std::string& check, std::optional<int> device) {
    Lane& l = lane();
    const std::lock_guard<std::mutex> lock(mutex_);
    l.check = check;
    l.device = device;
    l.since_ns = pending_clock_ns();
}

void Progress::finish(const CheckResult& result) {
    Lane& l = lane();
    const std::lock_guard<std::mutex> lock(mutex_);
    l.check.clear();
    finished_.push_back(result);
}

void Progress::watch(const std::string& what) {
    Lane& l = lane();
    const std::lock_guard<std::mutex> lock(mutex_);
    l.work = what;
}

CheckResult Progress::unfinished(const std::string& check, std::optional<int> device, double budget_s) const {
    CheckResult r;
    r.check = check;
    r.device = device;
    TimeoutEvidence details{budget_s, std::nullopt, {}};
    // A timeout with `reason`, `brief` and what it waited on.
    const auto timeout = [&details](std::string reason, std::string brief) {
        CheckOutcome o;
        o.status = CheckStatus::timeout, o.reason = std::move(reason), o.remedy = kTimeoutRemedy;
        o.evidence = details, o.brief = std::move(brief);
        return o;
    };
    for (const auto& l : lanes_) {
        if (l->check != check || l->device != device) continue;
        r.seconds = seconds_since(l->since_ns);
        const char* what = l->slot.what.load();
        if (what == nullptr) {
            r.outcome = timeout(fmt::format("did not finish within the time budget of {:g} s (running for {:.1f} "
                                            "s, in no driver or NVML call)",
                                            budget_s, r.seconds),
                                "did not finish");
            return r;
        }
        const double waited = seconds_since(l->slot.since_ns.load());
        details.pending_call = what;
        details.pending_seconds = waited;
        r.outcome = timeout(fmt::format("did not finish within the time budget of {:g} s: {} has not returned "
                                        "after {:.1f} s",
                                        budget_s, what, waited),
                            fmt::format("{} hung", what));
        return r;
    }
    // Not started: say what held the run up where a thread outside the checks waits in a call.
    std::string held;
    for (const auto& l : lanes_) {
        const char* what = l->slot.what.load();
        if (l->check.empty() && what != nullptr) {
            held = fmt::format(" ({} has not returned after {:.1f} s{})", what, seconds_since(l->slot.since_ns.load()),
                               l->work.empty() ? "" : ", " + l->work);
            details.pending_call = what;
        }
    }
    r.outcome =
        timeout(fmt::format("not started: the time budget of {:g} s was spent{}", budget_s, held), "not started");
    return r;
}

DoctorRun Progress::timed_out_run(double budget_s, double elapsed_s) const {
    const std::lock_guard<std::mutex> lock(mutex_);
    DoctorRun run;
    run.seconds = elapsed_s;
    run.device_count = device_count_;
    run.driver_version = driver_version_;
    run.devices = devices_;
    run.identities = identities_;
    if (run.identities.size() != devices_.size()) {  // not known yet: the ordinals alone
        run.identities.clear();
        for (int d : devices_) run.identities.push_back(gpu::DeviceIdentity{d, {}, {}, {}, {}, {}});
    }
    auto add = [&](const std::string& check, std::optional<int> device) {
        for (const CheckResult& r : finished_) {
            if (r.check == check && r.device == device) {
                run.results.push_back(r);
                return;
            }
        }
        run.results.push_back(unfinished(check, device, budget_s));
    };
    for (const auto& id : setup_) add(id, std::nullopt);
    if (devices_known_) {
        for (int d : devices_) {
            for (const auto& id : device_) add(id, d);
        }
    } else {
        // The devices were not known yet (a call before them never returned): each device check once,
        // not started, so that a run that names no GPU still cannot pass.
        for (const auto& id : device_) add(id, std::nullopt);
    }
    for (const auto& id : node_) add(id, std::nullopt);
    return run;
}

BudgetedRun run_within_budget(double budget_s, const std::shared_ptr<Progress>& progress,
                              std::function<DoctorRun()> work) {
    Stopwatch watch;
    auto task = std::make_shared<std::packaged_task<DoctorRun()>>(std::move(work));
    std::future<DoctorRun> done = task->get_future();
    std::thread worker([task, progress] { (*task)(); });
    if (done.wait_for(std::chrono::duration<double>(budget_s)) == std::future_status::ready) {
        worker.join();
        return BudgetedRun{done.get(), false};
    }
    // Past the budget: the worker waits in a call that may never return. Its second processes are
    // killed and reaped; the run is what Progress says; the thread is left to the process's end.
    // What each thread waits on is read before the second processes go (their end wakes the waits).
    worker.detach();
    BudgetedRun out{progress->timed_out_run(budget_s, watch.seconds()), true};
    ipc::end_every_child();
    return out;
}

}  // namespace cumemctl::doctor
