// doctor's time budget (--timeout): the whole run answers within it even when a driver or NVML call, or a
// second process, never returns. The run goes on a thread of its own; Progress records each finished
// result and what each check thread is doing (its check, and the call it waits in: base/pending.hpp, the
// watched driver and NVML tables). Past the budget the caller gets the results so far, every check not
// finished marked timeout with the pending call, every second process killed and reaped, and is told to
// end the process without unwinding (the threads still wait in the driver).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "base/pending.hpp"
#include "cuda/driver_info.hpp"
#include "doctor/check.hpp"
#include "doctor/runner.hpp"

namespace cumemctl::doctor {

// What a run has done so far, shared by its threads and the thread that waits for it. Thread-safe.
class Progress {
public:
    // The checks the run will run, by scope (ids in catalogue order), and later the devices it examines.
    void plan(std::vector<std::string> setup, std::vector<std::string> device, std::vector<std::string> node);
    void set_devices(std::vector<int> devices, int device_count);
    // The devices' names (UUID, bus id, NVML's index), in the order of set_devices, once known: a run past
    // its budget keeps them, so that its labels still join with dcgm-exporter's.
    void set_identities(std::vector<gpu::DeviceIdentity> identities);
    void set_driver(const DriverInfo& info);
    void set_driver_version(std::string version);  // DoctorRun::driver_version

    // The calling thread starts `check` (on `device`): its lane says so, and the thread's pending calls
    // go to the lane's slot from here on.
    void begin(const std::string& check, std::optional<int> device);
    // The calling thread finished a check with `result`.
    void finish(const CheckResult& result);
    // The calling thread does work of no check (loading NVML): its pending calls still go to a lane.
    void watch(const std::string& what);

    // The run as it stands after `budget_s`: finished results, and the others marked timeout.
    DoctorRun timed_out_run(double budget_s, double elapsed_s) const;
    std::optional<DriverInfo> driver() const;

private:
    struct Lane {
        std::string check;  // "" between checks
        std::optional<int> device;
        std::string work;  // what the thread does outside a check
        std::int64_t since_ns = 0;
        PendingSlot slot;
    };
    Lane& lane();
    // A timeout result for `check` on `device`, from the lane that runs it, if any.
    CheckResult unfinished(const std::string& check, std::optional<int> device, double budget_s) const;

    mutable std::mutex mutex_;
    std::vector<std::unique_ptr<Lane>> lanes_;
    std::vector<CheckResult> finished_;
    std::vector<std::string> setup_, device_, node_;
    std::vector<int> devices_;
    std::vector<gpu::DeviceIdentity> identities_;
    int device_count_ = -1;
    bool devices_known_ = false;
    std::optional<DriverInfo> driver_;
    std::string driver_version_;
};

// What run_within_budget gives: the run, and whether threads were left waiting (the caller must then end
// the process without unwinding, and it may not use what the work used).
struct BudgetedRun {
    DoctorRun run;
    bool timed_out = false;
};

// Runs `work` on a thread of its own, which records into `progress`, and waits at most `budget_s`: its
// run, or progress's timed-out run with every second process ended (ipc::end_every_child). An exception
// from `work` (an Error, a stop request) is thrown here when it ended in time.
BudgetedRun run_within_budget(double budget_s, const std::shared_ptr<Progress>& progress,
                              std::function<DoctorRun()> work);

}  // namespace cumemctl::doctor
