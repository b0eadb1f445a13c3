// The fabric-handle probe: proves that this process may create and export CU_MEM_HANDLE_TYPE_FABRIC
// memory, which the driver allows only to a process that can open an IMEX channel. Used by imex-setup
// --verify and by doctor.
#pragma once

#include <cstdint>
#include <string>

#include "cuda/driver.hpp"
#include "gpu/diagnosis/imex_channel_access.hpp"
#include "steps/step_log.hpp"

namespace cumemctl::gpu {

// What a probe that worked found.
struct FabricProbe {
    int device = 0;
    std::uint64_t granularity = 0;  // bytes: the minimum granularity, the size of the allocation made
    bool needed_context = false;    // the driver refused cuMemCreate without a context, so one was made
};

// Creates one granule of fabric-exportable device memory on `device` (cuMemCreate), exports it as a
// fabric handle (cuMemExportToShareableHandle) and releases it. Needs cuInit; makes a context only if
// the driver asks for one (CUDA_ERROR_INVALID_CONTEXT). Throws Error carrying the failed call with the
// diagnosis layer's cause and remedy (gpu/diagnosis/diagnosis.hpp: CUDA_ERROR_NOT_PERMITTED is no usable IMEX
// channel, described from `imex_channel_dir` as this process sees it); unavailable (exit 3) where
// the device has no fabric handles.
FabricProbe probe_fabric_handle(const DriverApi& api, int device,
                                const std::string& imex_channel_dir = imex::kImexChannelDir);

// The same, recording the steps "device", "granularity", "create", "export" and "release" in `log`
// (the failed one too: the diagnosis is added after it was recorded).
FabricProbe probe_fabric_handle(const DriverApi& api, int device, const std::string& imex_channel_dir, StepLog& log);

}  // namespace cumemctl::gpu
