// One rank of fabric-matrix: makes its memory on its GPU, writes its pattern, exports it and publishes
// its card; waits for every rank's card; imports, maps, checks (timed: the read's bandwidth) and
// releases every other rank's memory; publishes its row; keeps its own memory until every rank's row
// is in; then releases it, and removes its files once every rank has read the rows. Every step is
// recorded; a failure for one pair is that pair's cell, never the end of the rank.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cuda/driver_api.hpp"
#include "gpu/diagnosis/imex_channel_access.hpp"
#include "ipc/timeout.hpp"
#include "matrix/fd_exchange.hpp"
#include "matrix/rank_identity.hpp"
#include "matrix/records.hpp"
#include "matrix/rendezvous.hpp"
#include "nvml/nvml.hpp"
#include "steps/step.hpp"

namespace cumemctl::matrix {

// What one rank is asked to do.
struct RankRequest {
    RankIdentity id;
    std::uint64_t size = 0;  // 0: one recommended granule; otherwise rounded up to the granularity
    CUmemAllocationHandleType handle_type = CU_MEM_HANDLE_TYPE_FABRIC;
    ipc::Timeout timeout{60000};  // each wait for the other ranks (cards, rows, the end)
    ipc::Timeout poll{20};        // how often the folder is looked at while waiting
    bool keep = false;            // leave this rank's files in the folder
    std::string imex_channel_dir = imex::kImexChannelDir;
    int driver_version = 0;
    const DescriptorExchange* exchange = nullptr;  // posix-fd: the coordinator's socket
    const nvml::Library* nvml = nullptr;           // where given, the card carries the GPU's NVLink domain
};

// What the rank did and saw.
struct RankResult {
    Card card;                           // as published
    Row row;                             // as published
    std::map<int, Card> cards;           // every valid card seen, this rank's own included
    std::map<int, Row> rows;             // every valid row seen, this rank's own included
    std::map<int, std::string> refused;  // rank -> why its file in the folder was not used
    std::set<int> missing_cards;         // ranks whose card never came
    std::vector<steps::Step> steps;
    std::optional<Problem> problem;     // why this rank had no memory to offer (then every cell fails)
    std::vector<std::string> warnings;  // the end of the run that was not tidy
};

// Refuses a device that says it cannot export `type` handles: Error (unavailable) naming the device
// attribute that is 0.
void require_handle_support(const DriverApi& api, int device, CUmemAllocationHandleType type);

// Runs the rank in its device's primary context (made here), meeting the others through `rv` (a folder
// or PMIx). Never throws Error (a failure is the result's problem or a cell); throws Interrupted on
// SIGINT or SIGTERM after withdrawing what it published, with everything it made released as the guards
// unwind.
void run_rank(const DriverApi& api, Rendezvous& rv, const RankRequest& request, RankResult& result);

}  // namespace cumemctl::matrix
