// The diagnosis layer: turns a failed driver call (call, CUresult) and what the caller asked for into
// a cause and a remedy a person can act on, with the exit code that fits: no usable IMEX channel for
// fabric handles, the device attribute that is 0, the free memory, the property the driver rejected.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "cuda/driver_api.hpp"
#include "gpu/diagnosis/imex_channel_access.hpp"
#include "base/error.hpp"

namespace cumemctl::gpu {

// What the caller asked of the failed call, beyond the CUresult.
struct DiagnosisContext {
    int device = -1;                                                  // the device the call was for; -1 where none
    std::optional<CUmemAllocationProp> prop;                          // the properties asked for (granularity, create)
    CUmemAllocationHandleType handle_type = CU_MEM_HANDLE_TYPE_NONE;  // export and import calls
    std::optional<std::uint64_t> size;                                // bytes asked for
    std::optional<std::uint64_t> granularity;                         // the minimum granularity, where known
    std::string imex_channel_dir = imex::kImexChannelDir;             // where the driver looks for IMEX channels
};

// The valid sizes nearest to `size` for a granularity: the multiple below (when above 0) and the one
// above; for sizes below one granule, one and two granules.
struct NearestSizes {
    std::uint64_t lower = 0;
    std::uint64_t upper = 0;
};

// A size that is not a multiple of the granularity, with the valid sizes nearest to it: what went
// wrong, as data, so that the caller can word its own remedy (a command's option, doctor's check).
struct SizeMismatch {
    std::uint64_t size = 0;
    std::uint64_t granularity = 0;
    NearestSizes nearest;
};

// The remedy of properties that the device's attributes allow and the driver still refused, as create
// words it (a person who chose the options); its diagnosis sets remedy_changes_request, so that doctor,
// which chose them itself, words its own.
inline constexpr const char* kRefusedPropertiesRemedy =
    "leave out options one at a time ('cumemctl granularity' lists what this driver accepts)";

// The remedy of cuMemAddressReserve's out of memory: the process's virtual address space has no range
// of that size left, which neither the GPU's memory nor another process has any part in.
inline constexpr const char* kAddressSpaceRemedy =
    "the process has no virtual address range of that size left (the GPU's memory is not what ran out): "
    "reserve less, check the process's address-space limit (ulimit -v; a container's or a job's limit), "
    "and see whether something in it reserves ranges and never frees them (cuMemAddressFree)";

// A cause, a remedy and the exit code that fits them; the remedy names no command-line option.
struct Diagnosis {
    std::string cause;
    std::string remedy;
    ExitCode exit_code = ExitCode::failed;
    std::optional<SizeMismatch> size{};   // set where the size is what is wrong
    bool remedy_changes_request = false;  // the remedy is kRefusedPropertiesRemedy (Problem's field of that name)
};

// The usage error of a size that is not a multiple of the granularity: message, cause (the nearest
// valid sizes) and a remedy that names no setting; a caller that can round up adds that way out.
Problem size_mismatch_problem(const SizeMismatch& mismatch);

// Explains `failure`; nullopt where nothing is known beyond the driver's own text. Reads device
// attributes, free memory (through the current context, if any) and the IMEX channel folder.
std::optional<Diagnosis> diagnose(const DriverApi& api, const DriverFailure& failure, const DiagnosisContext& context);

// Adds the diagnosis of problem.driver (when there is one and it can be explained) to the problem:
// cause, remedy and exit code; the device too where the context names one. A failure that cannot be
// explained keeps its exit code and gets a general remedy.
void diagnose_problem(const DriverApi& api, Problem& problem, const DiagnosisContext& context);

// create's remedy-by-CUresult table (le-bind words its own: le/logical_endpoint_diagnosis): what to do about a failed
// call that nothing more explains (no diagnosis, or none was made): out of memory (the address space's for
// cuMemAddressReserve, else the device's), a device unavailable, not permitted, a hardware error each have theirs; any
// other result, the general one that names the call.
std::string remedy_by_result(const DriverFailure& failure);

// Why `size` cannot be allocated with `granularity` (not a multiple): the granularity and the two
// nearest valid sizes (also as data, in `size`), and what to do (exit code usage).
Diagnosis size_diagnosis(std::uint64_t size, std::uint64_t granularity);

// The valid sizes nearest to `size` for a granularity (see NearestSizes).
NearestSizes nearest_valid_sizes(std::uint64_t size, std::uint64_t granularity);

}  // namespace cumemctl::gpu
