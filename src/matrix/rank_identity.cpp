#include "matrix/rank_identity.hpp"

#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

#include "base/error.hpp"
#include "base/setting.hpp"

namespace cumemctl::matrix {
namespace {

// One launcher's variables: rank, count and local rank (empty where it has none).
struct Launcher {
    const char* rank;
    const char* size;
    const char* local_rank;
};

constexpr Launcher kLaunchers[] = {
    {"SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID"},
    {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK"},
    {"PMIX_RANK", "", ""},
    {"JOB_COMPLETION_INDEX", "", ""},
};

// A non-negative number from `text`; throws Error (usage) naming `what`.
int parse_count(const std::string& text, const std::string& what) {
    int value = -1;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (ec != std::errc() || end != text.data() + text.size() || value < 0) {
        throw Error(ExitCode::usage, fmt::format("{} is '{}', not a number of 0 or more", what, text),
                    "check the launcher's environment, or give the rank and the number of ranks explicitly");
    }
    return value;
}

// A character a run name may hold: a letter, a digit, '.', '_' or '-'.
bool run_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
}

// The device (as given, else the launcher's local rank, else 0) and the run (as given, else the Slurm
// job id, else `fallback_run`), the run checked.
void choose_device_and_run(const RankGiven& given, std::optional<int> local, const std::string& local_source,
                           const EnvLookup& env, const std::string& fallback_run, RankIdentity& id) {
    if (given.device) {
        id.device = *given.device;
        id.device_source = "given";
    } else if (local) {
        id.device = *local;
        id.device_source = local_source;
    } else {
        id.device = 0;
        id.device_source = "default";
    }
    if (given.run) {
        id.run = *given.run;
    } else if (const auto job = env("SLURM_JOB_ID")) {
        id.run = *job;
    } else {
        id.run = fallback_run;
    }
    check_run_name(id.run);
}

}  // namespace

EnvLookup process_environment() {
    return [](const std::string& name) -> std::optional<std::string> {
        const char* v = std::getenv(name.c_str());
        if (v == nullptr || *v == '\0') return std::nullopt;
        return std::string(v);
    };
}

void check_run_name(const std::string& run) {
    bool ok = !run.empty() && run.size() <= 64 && run.front() != '.';
    for (const char c : run) ok = ok && run_name_char(c);
    if (!ok) {
        throw Error(ExitCode::usage, fmt::format("invalid run name '{}'", run),
                    "a run name has 1 to 64 letters, digits, '.', '_' or '-', and does not start with '.'");
    }
}

RankIdentity resolve_rank_identity(const RankGiven& given, const EnvLookup& env) {
    RankIdentity id;
    std::optional<int> rank = given.rank;
    std::optional<int> ranks = given.ranks;
    std::optional<int> local;
    std::string local_source;
    id.rank_source = "given";
    for (const Launcher& l : kLaunchers) {
        const auto r = env(l.rank);
        if (!r) continue;
        if (!rank) {
            rank = parse_count(*r, l.rank);
            id.rank_source = l.rank;
        }
        if (!ranks && *l.size != '\0') {
            if (const auto n = env(l.size)) ranks = parse_count(*n, l.size);
        }
        if (*l.local_rank != '\0') {
            if (const auto lr = env(l.local_rank)) {
                local = parse_count(*lr, l.local_rank);
                local_source = l.local_rank;
            }
        }
        break;
    }
    if (!rank) {
        throw Error(ExitCode::usage, "this rank's number is unknown: it was not given and no launcher set one",
                    "give the rank and the number of ranks explicitly, or start the ranks with srun, mpirun or as a "
                    "Kubernetes Indexed Job");
    }
    if (!ranks) {
        throw Error(ExitCode::usage, "the number of ranks is unknown: it was not given and the launcher did not say",
                    "give the number of ranks explicitly");
    }
    if (*ranks < 1 || *ranks > kMaxRanks) {
        throw Error(ExitCode::usage, fmt::format("invalid number of ranks {}", *ranks),
                    fmt::format("give 1 to {} ranks", kMaxRanks));
    }
    if (*rank < 0 || *rank >= *ranks) {
        throw Error(ExitCode::usage, fmt::format("rank {} is outside 0-{} ({} ranks)", *rank, *ranks - 1, *ranks),
                    "give a rank below the number of ranks");
    }
    id.rank = *rank;
    id.ranks = *ranks;
    choose_device_and_run(given, local, local_source, env, "cumemctl", id);
    return id;
}

RankIdentity pmix_rank_identity(const RankGiven& given, const PmixView& pmix, const EnvLookup& env) {
    if (pmix.size < 1 || pmix.size > kMaxRanks || pmix.rank < 0 || pmix.rank >= pmix.size) {
        throw Error(ExitCode::unavailable, fmt::format("the PMIx server says rank {} of {}", pmix.rank, pmix.size),
                    fmt::format("fabric-matrix takes 1 to {} ranks", kMaxRanks));
    }
    if ((given.rank && *given.rank != pmix.rank) || (given.ranks && *given.ranks != pmix.size)) {
        const std::string rank = setting_name(Setting::rank), ranks = setting_name(Setting::ranks);
        throw Error(ExitCode::usage,
                    fmt::format("{} and {} say rank {} of {}, the PMIx server rank {} of {}", rank, ranks,
                                given.rank.value_or(pmix.rank), given.ranks.value_or(pmix.size), pmix.rank, pmix.size),
                    fmt::format("leave out {} and {}: with PMIx the launcher numbers the ranks", rank, ranks));
    }
    RankIdentity id;
    id.rank = pmix.rank;
    id.ranks = pmix.size;
    id.rank_source = "PMIx";
    // The namespace as a run name: every character a run name may not hold made '-'.
    std::string from_nspace;
    for (const char c : pmix.nspace.substr(0, 64)) from_nspace += run_name_char(c) ? c : '-';
    if (from_nspace.empty() || from_nspace.front() == '.') from_nspace = ("pmix" + from_nspace).substr(0, 64);
    choose_device_and_run(given, pmix.local_rank, "PMIX_LOCAL_RANK", env, from_nspace, id);
    return id;
}

}  // namespace cumemctl::matrix
