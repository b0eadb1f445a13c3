// imex-setup's results: what was asked, the channel folder and each channel as found and as left, and
// with --verify what the child that made a fabric-handle allocation found.
#pragma once

#include <optional>
#include <string>

#include "gpu/diagnosis/channel_verify.hpp"
#include "imex/imex_setup.hpp"
#include "report/results.hpp"
#include "util/user_group.hpp"

namespace cumemctl::cmd {

// --verify's answer: what the child found, and as whom.
struct ImexVerifyOutcome {
    gpu::FabricVerifyResult got;
    Owner as;                   // who the child ran as, by name where known
    std::optional<int> device;  // the ordinal the child found; else the one typed (none for a UUID or a bus id)
    std::string typed;          // --device as typed, shown where no ordinal is known
};

struct ImexSetupResults final : Results {
    imex::ImexSetupRequest request;
    imex::ImexSetupResult result;
    std::optional<ImexVerifyOutcome> verify;  // with --verify, once the child answered

    nlohmann::json to_json() const override;
    // The channels as made or found, and --verify's answer (imex_setup_results.cpp).
    std::vector<Table> tables(const Report& report) const override;
};

}  // namespace cumemctl::cmd
