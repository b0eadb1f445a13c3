// The PMIx seam, optional: the key-value store and fence of the PMIx server that the launcher runs on
// each node (Slurm's srun --mpi=pmix, Open MPI's mpirun, prterun). libpmix is loaded at run time, like
// the driver and NVML, so cumemctl runs without it; the types come from Debian's libpmix-dev header
// where the build found it (CUMEMCTL_HAVE_PMIX), else every call says that this build has no PMIx.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ipc/timeout.hpp"

namespace cumemctl::pmix {

// Whether the launcher set this process up as a PMIx client: PMIX_NAMESPACE and PMIX_RANK are set.
bool launched_by_pmix();

// What a fence or a get answered: nothing went wrong, or PMIx's error name and text.
struct Outcome {
    bool ok = true;
    std::string error;  // "PMIX_ERR_TIMEOUT (TIMEOUT)"
};

// One connection to the local PMIx server, for this process's life: PMIx_Init on connect, PMIx_Finalize
// when it goes. Not copyable.
class Client {
public:
    // Loads the library (`library`, else $CUMEMCTL_LIBPMIX, else libpmix.so.2 from the loader's path or
    // Debian's /usr/lib/<multiarch>/pmix2/lib) and initialises the client. Throws Error (unavailable)
    // with the library tried and PMIx's words when it cannot.
    static Client connect(const std::string& library = "");
    Client(Client&&) noexcept;
    Client& operator=(Client&&) = delete;
    ~Client();

    const std::string& library() const;               // the path that loaded
    const std::string& version() const;               // PMIx_Get_version
    const std::string& nspace() const;                // this job's namespace
    std::uint32_t rank() const;                       // this process's rank in it
    std::uint32_t job_size() const;                   // PMIX_JOB_SIZE
    std::optional<std::uint32_t> local_rank() const;  // PMIX_LOCAL_RANK, where the server gives it

    // Puts `value` under `key` for every rank of the job (PMIX_GLOBAL); commit() sends what was put.
    // Throw Error (failed) with PMIx's words.
    void put(const std::string& key, const std::string& value);
    void commit();
    // A fence that collects the data put so far, bounded by `timeout`: over the whole namespace, or over
    // the given ranks only (this one among them). A call that does not return within the timeout and a
    // grace is given up (its thread still waits in the library); a later fence over the same ranks is
    // then refused, one over other ranks (another collective) is tried.
    Outcome fence(ipc::Timeout timeout, const std::vector<std::uint32_t>& ranks = {});
    // The string each of `ranks` put under `key`, or nullopt with why (never came, timed out), in the
    // order of `ranks`. The gets run at once (64 at a time), each on a thread of its own and bounded as
    // a fence is, so that one that never returns (a rank that died: Slurm's direct modex may not honour
    // the timeout) does not hold up the others; a later get of that rank is refused. Throws Error
    // (failed) where no thread can be started.
    struct Got {
        std::optional<std::string> value;
        Outcome why;
    };
    std::vector<Got> get(const std::vector<std::uint32_t>& ranks, const std::string& key, ipc::Timeout timeout);

    struct Impl;

private:
    explicit Client(std::unique_ptr<Impl> impl);
    std::unique_ptr<Impl> impl_;
};

}  // namespace cumemctl::pmix
