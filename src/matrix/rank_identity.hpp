// Who this rank is in a distributed fabric-matrix run: its rank, the number of ranks, its local rank
// on the node (which picks its GPU) and the run's name, from what was given or from the launcher's
// environment (Slurm, Open MPI, PMIx, a Kubernetes Indexed Job).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace cumemctl::matrix {

// The most ranks a run may have.
inline constexpr int kMaxRanks = 65536;

// Looks up an environment variable: its value, or nullopt when unset or empty.
using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;

// The process environment as an EnvLookup.
EnvLookup process_environment();

// What was given explicitly (each may be absent).
struct RankGiven {
    std::optional<int> rank;
    std::optional<int> ranks;
    std::optional<int> device;
    std::optional<std::string> run;
};

// The identity, with where each part came from.
struct RankIdentity {
    int rank = 0;
    int ranks = 1;
    int device = 0;
    std::string run;
    std::string rank_source;    // "given", "SLURM_PROCID", "OMPI_COMM_WORLD_RANK", ...
    std::string device_source;  // "given", "SLURM_LOCALID", ..., "default"
};

// Resolves the identity: the given values first, then Slurm (SLURM_PROCID, SLURM_NTASKS,
// SLURM_LOCALID), Open MPI (OMPI_COMM_WORLD_RANK, _SIZE, _LOCAL_RANK), PMIx (PMIX_RANK), a Kubernetes
// Indexed Job (JOB_COMPLETION_INDEX); the count from the same launcher or as given; the device as given,
// else the local rank, else 0; the run as given, else SLURM_JOB_ID, else "cumemctl". Throws Error
// (usage) when no rank or count can be found, a value is no number or out of range, or the run name
// is not 1-64 letters, digits, '.', '_' or '-' (not starting with '.').
RankIdentity resolve_rank_identity(const RankGiven& given, const EnvLookup& env);

// What the launcher's PMIx server says of this process (pmix::Client).
struct PmixView {
    int rank = 0;
    int size = 0;
    std::optional<int> local_rank;  // PMIX_LOCAL_RANK
    std::string nspace;
};

// The identity of a rank that meets the others through PMIx: rank and count from the server (a given
// --rank or --ranks must agree: else Error, usage), the device as given, else the PMIx local rank, else
// 0; the run as given, else SLURM_JOB_ID, else the namespace with every character a run name may not
// hold made '-' (at most 64).
RankIdentity pmix_rank_identity(const RankGiven& given, const PmixView& pmix, const EnvLookup& env);

// Checks a run name (see resolve_rank_identity); throws Error (usage).
void check_run_name(const std::string& run);

}  // namespace cumemctl::matrix
