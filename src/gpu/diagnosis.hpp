// The diagnosis layer: turns a failed driver call (call, CUresult) and what the caller asked for into
// a cause and a remedy a person can act on, with the exit code that fits: no usable IMEX channel for
// fabric handles, the device attribute that is 0, the free memory, the property the driver rejected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cuda/driver_api.hpp"
#include "gpu/imex_channel_access.hpp"
#include "report/error.hpp"

namespace cumemctl {

// What the caller asked of the failed call, beyond the CUresult.
struct DiagnosisContext {
    int device = -1;                                                  // the device the call was for; -1 where none
    std::optional<CUmemAllocationProp> prop;                          // the properties asked for (granularity, create)
    CUmemAllocationHandleType handle_type = CU_MEM_HANDLE_TYPE_NONE;  // export and import calls
    std::optional<std::uint64_t> size;                                // bytes asked for
    std::optional<std::uint64_t> granularity;                         // the minimum granularity, where known
    std::string imex_channel_dir = kImexChannelDir;                   // where the driver looks for IMEX channels
};

// A cause, a remedy and the exit code that fits them.
struct Diagnosis {
    std::string cause;
    std::string remedy;
    ExitCode exit_code = ExitCode::failed;
};

// Explains `failure`; nullopt where nothing is known beyond the driver's own text. Reads device
// attributes, free memory (through the current context, if any) and the IMEX channel folder.
std::optional<Diagnosis> diagnose(const DriverApi& api, const DriverFailure& failure, const DiagnosisContext& context);

// Adds the diagnosis of problem.driver (when there is one and it can be explained) to the problem:
// cause, remedy and exit code; the device too where the context names one. A failure that cannot be
// explained keeps its exit code and gets a general remedy.
void diagnose_problem(const DriverApi& api, Problem& problem, const DiagnosisContext& context);

// Why `size` cannot be allocated with `granularity` (not a multiple): the granularity and the two
// nearest valid sizes, and what to do (exit code usage).
Diagnosis size_diagnosis(std::uint64_t size, std::uint64_t granularity);

// The valid sizes nearest to `size` for a granularity: the multiple below (when above 0) and the one
// above; for sizes below one granule, one and two granules.
struct NearestSizes {
    std::uint64_t lower = 0;
    std::uint64_t upper = 0;
};
NearestSizes nearest_valid_sizes(std::uint64_t size, std::uint64_t granularity);

}  // namespace cumemctl
