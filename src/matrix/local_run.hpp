// fabric-matrix --local: one rank per GPU of this node, each a second process of our own executable
// (ipc::spawn_connected) that sees only its GPU with fabric handles (CUDA_VISIBLE_DEVICES set to the GPU's
// UUID, as a rank on another node would; with posix-fd handles it sees every GPU), meeting in a
// private temporary folder; with posix-fd handles the descriptors travel over each rank's socket
// through this process (fd_exchange). Each rank answers on its socket with its steps, its problem,
// its card and its row; this process builds the matrix from them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cuda/driver_api.hpp"
#include "gpu/diagnosis/imex_channel_access.hpp"
#include "ipc/process.hpp"
#include "ipc/timeout.hpp"
#include "matrix/matrix.hpp"
#include "matrix/rank_run.hpp"
#include "steps/step.hpp"

namespace cumemctl::matrix {

// The run name of --local's ranks (each runs the hidden Command::matrix_rank).
inline constexpr const char* kLocalRunName = "local";

// What --local is asked to do.
struct LocalRequest {
    std::vector<int> devices;  // one rank per device, in this order (ordinals of this process)
    std::uint64_t size = 0;
    CUmemAllocationHandleType handle_type = CU_MEM_HANDLE_TYPE_FABRIC;
    ipc::Timeout timeout{60000};
    bool keep = false;  // keep the temporary folder and its files
    std::string imex_channel_dir = imex::kImexChannelDir;
    std::string executable = ipc::kSelfExecutable;
    std::string libcuda;  // the driver library the ranks load: the one this process loaded
};

// One rank as this process saw it.
struct LocalRank {
    int rank = 0;
    int device = 0;  // ordinal in this process
    int pid = 0;
    int exit_status = -1;  // its exit code; 128 + N when killed by signal N
    std::vector<steps::Step> steps;
    std::optional<Problem> problem;     // its own, or why it gave no answer
    std::vector<std::string> warnings;  // its own
};

// What the run found.
struct LocalResult {
    std::string folder;  // the temporary folder (gone unless kept)
    std::vector<LocalRank> ranks;
    MatrixInput input;
};

// The command line of rank `rank`'s process, after the executable.
std::vector<std::string> local_rank_arguments(const LocalRequest& request, const std::string& folder, int rank,
                                              int child_device);

// Starts the ranks, brokers posix-fd descriptors, collects every rank's answer and waits for every
// process. Throws Error only when the folder or a process cannot be made; Interrupted on SIGINT or
// SIGTERM (the ranks are stopped and reaped as their owners go, the folder removed).
LocalResult run_local(const DriverApi& api, const LocalRequest& request);

// A rank's answer on its socket: its result as JSON ({card, row, warnings}); and back.
nlohmann::json rank_answer_json(const RankResult& result);

}  // namespace cumemctl::matrix
