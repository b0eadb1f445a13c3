// The fabric-handle probe: proves that this process may create and export CU_MEM_HANDLE_TYPE_FABRIC
// memory, which the driver allows only to a process that can open an IMEX channel. Used by imex-setup
// --verify and by doctor.
#pragma once

#include <cstdint>

#include "cuda/driver.hpp"

namespace cumemctl {

// What a probe that worked found.
struct FabricProbe {
    int device = 0;
    std::uint64_t granularity = 0;  // bytes: the minimum granularity, the size of the allocation made
    bool needed_context = false;    // the driver refused cuMemCreate without a context, so one was made
};

// Creates one granule of fabric-exportable device memory on `device` (cuMemCreate), exports it as a
// fabric handle (cuMemExportToShareableHandle) and releases it. Needs cuInit; makes a context only if
// the driver asks for one (CUDA_ERROR_INVALID_CONTEXT). Throws Error carrying the failed call,
// diagnosed with diagnose_fabric_failure; unavailable (exit 3) where the device has no fabric handles.
FabricProbe probe_fabric_handle(const DriverApi& api, int device);

// Adds a cause and a remedy to a failed fabric-handle call: CUDA_ERROR_NOT_PERMITTED means that the
// process can open no IMEX channel node, and says how to make one.
void diagnose_fabric_failure(Problem& problem);

}  // namespace cumemctl
