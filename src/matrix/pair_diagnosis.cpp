#include "matrix/pair_diagnosis.hpp"

#include <fmt/format.h>

#include "cuda/driver_call.hpp"
#include "cuda/driver_info.hpp"

namespace cumemctl::matrix {
namespace {

Cell failure(int peer, std::string diagnosis, Problem problem) {
    Cell c;
    c.peer = peer;
    c.status = CheckStatus::fail;
    c.diagnosis = std::move(diagnosis);
    c.problem = std::make_shared<const Problem>(std::move(problem));
    return c;
}

std::string who(const Card& card) {
    return fmt::format("rank {} ({})", card.rank, card.host);
}

// Why the GPUs of two ranks are in different NVLink domains by their cards, or "" when they are in one,
// neither is attached, or a card cannot say.
std::string domain_split(const Card& a, const Card& b) {
    if (!a.fabric_attached || !b.fabric_attached || (!*a.fabric_attached && !*b.fabric_attached)) return "";
    auto where = [](const Card& c) {
        return c.fabric_attached.value_or(false) ? fmt::format("is in NVLink domain {}", fabric_domain_of(c))
                                                 : std::string("is not attached to a multi-node NVLink fabric");
    };
    if (fabric_domain_of(a) == fabric_domain_of(b)) return "";
    std::string split = fmt::format("the GPU of {} {}, the GPU of {} {}", who(a), where(a), who(b), where(b));
    if (*a.fabric_attached && *b.fabric_attached && a.fabric_clique == b.fabric_clique) {
        split += fmt::format(" (clique {} on both, in two clusters: only the cluster UUID tells them apart)",
                             a.fabric_clique);
    }
    return split;
}

}  // namespace

std::string diagnosis_of(const Problem& problem) {
    if (problem.driver && result_of(*problem.driver) == CUDA_ERROR_NOT_PERMITTED) return "imex-channel";
    if (problem.exit_code == ExitCode::unavailable) return "no-support";
    if (problem.driver) return "driver";
    return "failed";
}

std::optional<Cell> refuse_pair(const Card& mine, const Card& peer, std::uint64_t granularity) {
    if (peer.error) {
        return failure(peer.rank, "rank-failed",
                       Problem{.message = fmt::format("{} had no memory to offer: {}", who(peer), peer.error->message),
                               .cause = peer.error->cause,
                               .remedy = peer.error->remedy});
    }
    if (peer.version != mine.version || peer.driver_version != mine.driver_version) {
        return failure(peer.rank, "version",
                       Problem{.message = fmt::format("{} runs cumemctl {} on driver {}, this rank cumemctl {} on "
                                                      "driver {}",
                                                      who(peer), peer.version, cuda_version_string(peer.driver_version),
                                                      mine.version, cuda_version_string(mine.driver_version)),
                               .cause = "the ranks run different cumemctl or driver versions",
                               .remedy = "run the same cumemctl and the same driver on every node"});
    }
    if (peer.handle_type != mine.handle_type) {
        return failure(peer.rank, "invalid-file",
                       Problem{.message = fmt::format("{} offers a {} handle, this rank uses {}", who(peer),
                                                      peer.handle_type, mine.handle_type),
                               .remedy = "run every rank with the same handle type"});
    }
    if (granularity == 0 || peer.size % granularity != 0) {
        return failure(peer.rank, "invalid-file",
                       Problem{.message = fmt::format("{} offers {} bytes, not a multiple of this rank's granularity "
                                                      "{}",
                                                      who(peer), peer.size, granularity),
                               .remedy = "run every rank with the same size on the same kind of GPU"});
    }
    return std::nullopt;
}

Cell checked_cell(const Card& mine, const Card& peer, const gpu::VerifyResult& check) {
    Cell c;
    c.peer = peer.rank;
    c.gbps = check.check_gbps;
    c.seconds = check.check_seconds;
    if (check.ok()) {
        c.status = CheckStatus::pass;
        return c;
    }
    Problem p = gpu::pattern_mismatch(fmt::format("{} reading {}", who(mine), who(peer)), check).problem();
    p.cause = mine.rank == peer.rank ? "the memory does not hold what this rank wrote"
                                     : "the data read across the fabric differ from what the exporting rank wrote";
    Cell f = failure(peer.rank, "mismatch", std::move(p));
    f.gbps = c.gbps;
    f.seconds = c.seconds;
    return f;
}

Cell failed_cell(const Card& mine, const Card& peer, Problem problem, bool fabric) {
    std::string kind = diagnosis_of(problem);
    problem.message = fmt::format("{} reading {}: {}", who(mine), who(peer), problem.message);
    if (const std::string split = fabric ? domain_split(mine, peer) : ""; !split.empty()) {
        problem.cause = fmt::format("different NVLink domains: {}; fabric memory is shared only within one{}", split,
                                    problem.cause.empty() ? "" : " (" + problem.cause + ")");
        problem.remedy =
            "run the ranks that share memory on GPUs of one NVLink domain (the same cluster UUID and clique: "
            "'cumemctl devices' or the Fabric section of 'nvidia-smi -q' on each node), or check the NVLink "
            "partition the nodes were given";
        return failure(peer.rank, "nvlink-domain", std::move(problem));
    }
    if (fabric && kind == "imex-channel" && mine.rank != peer.rank) {
        problem.cause += (problem.cause.empty() ? "" : "; ") +
                         fmt::format(
                             "{} may import only memory exported through an IMEX channel its user may open "
                             "too: the same channel number on both nodes",
                             who(mine));
    }
    if (fabric && kind == "driver") {
        kind = "imex-domain";
        problem.cause = fmt::format(
            "{} and {} are not in one IMEX domain, or the IMEX service is not running on "
            "one of them{}",
            who(mine), who(peer), problem.cause.empty() ? "" : " (" + problem.cause + ")");
        problem.remedy =
            "check that both nodes are listed in the same IMEX domain (nodes_config.cfg) and that "
            "nvidia-imex runs on each (systemctl status nvidia-imex)";
    }
    return failure(peer.rank, kind, std::move(problem));
}

Cell own_failure_cell(int peer, const Problem& problem) {
    Problem p = problem;
    p.message = "this rank had no memory of its own: " + p.message;
    return failure(peer, diagnosis_of(problem), std::move(p));
}

Cell refused_file_cell(int peer, const std::string& why) {
    return failure(peer, "invalid-file",
                   Problem{.message = fmt::format("rank {}: {}", peer, why),
                           .cause = "the rendezvous folder holds a file this rank does not trust or cannot read",
                           .remedy = "remove stray files from the folder, and let only this user write it"});
}

Cell missing_cell(int peer, ipc::Timeout timeout) {
    return failure(
        peer, "missing",
        Problem{.message = fmt::format("rank {} never came: no card within {}", peer, ipc::describe(timeout)),
                .cause = "the rank was not started, started late or died, or cannot reach the rendezvous (the "
                         "folder, or the launcher's PMIx server)",
                .remedy = "start every rank (with a folder, on one that every node sees), or allow a longer "
                          "timeout"});
}

}  // namespace cumemctl::matrix
