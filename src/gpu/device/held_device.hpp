// A GPU held by other processes, judged once for every command: a failed driver call that another
// process may cause (out of memory making a context or allocating device memory; a context refused in
// exclusive-process mode) is judged with the processes NVML lists on the device. Other processes there
// mean "held" (doctor: busy; every other command: exit 3 naming them); none, or no NVML to ask, leaves
// the failure what it is, with what could and could not be told. The table is in cumemctl(1), EXIT STATUS.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/error.hpp"
#include "nvml/nvml.hpp"

namespace cumemctl::gpu {

// Free device memory below which a context refused with CUDA_ERROR_UNKNOWN is taken for a full device
// (a context of the H200 needs about 500 MiB; its driver answered so with 64 MiB left, GPU run 15).
inline constexpr std::uint64_t kFullDeviceBytes = 512ULL << 20;

// What another process may hold, judging by the failed call: the device's memory (out of memory at a
// context or an allocation) or its exclusive-process context (CUDA_ERROR_DEVICE_UNAVAILABLE).
enum class HoldKind { memory, exclusive };

// The hold a failed call may show, from its entry point and CUresult (typed, never their names):
// CUDA_ERROR_OUT_OF_MEMORY (not cuMemAddressReserve's, which is this process's address space),
// CUDA_ERROR_DEVICE_UNAVAILABLE, or a context refused with CUDA_ERROR_UNKNOWN (judged again with NVML's
// free memory); nullopt for any other failure.
std::optional<HoldKind> possible_hold(const DriverFailure& failure);

// Whether the failed call is one that makes a context (cuDevicePrimaryCtxRetain, cuGreenCtxCreate).
bool context_call(const DriverFailure& failure);

// The judgement of a failure with NVML's view of the device.
struct HeldDevice {
    enum class Verdict {
        not_held,          // the failure is none that another process causes (or the device has room)
        held,              // other processes hold it: `holders`
        holders_unknown,   // NVML cannot list the device's processes: `why`
        no_other_process,  // NVML lists none but this process's own: the failure stands
    };
    Verdict verdict = Verdict::not_held;
    HoldKind kind = HoldKind::memory;
    std::vector<GpuProcess> holders;          // held: the other processes, in NVML's order
    std::string why;                          // holders_unknown: why NVML could not tell
    std::optional<std::uint64_t> free_bytes;  // NVML's free memory, where it was asked (CUDA_ERROR_UNKNOWN)
};

// The processes on the GPU whose UUID is `uuid` other than `own`, whatever failed: verdict held (with
// `holders`), no_other_process or holders_unknown (with `why`); kind memory. Never throws.
HeldDevice holders_of(const nvml::Library* nvml, const std::string& uuid, const std::vector<pid_t>& own);

// Judges `failure` on the GPU whose UUID is `uuid`: NVML's process list without `own` (this process and
// its own second processes). Never throws.
HeldDevice judge_held(const DriverFailure& failure, const nvml::Library* nvml, const std::string& uuid,
                      const std::vector<pid_t>& own);

// "another process holds the device's memory", "2 other processes hold its exclusive-process context".
std::string holds_sentence(const HeldDevice& held);

// "pid 4242 (python3) using 139.22 GiB; pid 777 (solver) using 1 GiB".
std::string holders_sentence(const std::vector<GpuProcess>& holders);

// The remedy of a command that could not run beside the holders (not doctor, which words its own).
inline constexpr const char* kHeldRemedy =
    "a job is using this GPU: run this again when it has ended or freed the GPU (nvidia-smi lists the "
    "processes), or choose another GPU; 'cumemctl doctor' tells a GPU in use from a broken one";

// Makes `problem` the holders' doing, the one way a problem becomes busy: exit 3 (unavailable), kind
// busy, held_by the holders. Its words (message, cause, remedy) stay the caller's.
void mark_held(Problem& problem, std::vector<GpuProcess> holders);

// A command's problem judged: a held device makes it exit 3 (unavailable), kind "busy", naming the
// holders in the cause and `held_by`, with kHeldRemedy; holders_unknown adds why NVML could not tell to
// the cause; not_held and no_other_process leave it as it is. Returns the judgement.
HeldDevice judge_held_problem(Problem& problem, const nvml::Library* nvml, const std::string& uuid,
                              const std::vector<pid_t>& own);

}  // namespace cumemctl::gpu
