// Who a rank is: given values, then Slurm, Open MPI, PMIx and a Kubernetes Indexed Job; the run name.
#include <doctest/doctest.h>

#include <map>

#include "base/error.hpp"
#include "matrix/rank_identity.hpp"

using namespace cumemctl;
using namespace cumemctl::matrix;

namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
    return [vars](const std::string& name) -> std::optional<std::string> {
        const auto it = vars.find(name);
        if (it == vars.end()) return std::nullopt;
        return it->second;
    };
}

std::string usage_message(const RankGiven& given, const EnvLookup& env) {
    try {
        resolve_rank_identity(given, env);
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::usage);
        return e.what();
    }
    return "no error";
}

}  // namespace

TEST_CASE("Slurm gives rank, count, local rank (the device) and the job id (the run)") {
    const auto id = resolve_rank_identity(
        {}, env_of({{"SLURM_PROCID", "13"}, {"SLURM_NTASKS", "64"}, {"SLURM_LOCALID", "1"}, {"SLURM_JOB_ID", "4242"}}));
    CHECK(id.rank == 13);
    CHECK(id.ranks == 64);
    CHECK(id.device == 1);
    CHECK(id.run == "4242");
    CHECK(id.rank_source == "SLURM_PROCID");
    CHECK(id.device_source == "SLURM_LOCALID");
}

TEST_CASE("given values win over the launcher's") {
    const auto id =
        resolve_rank_identity({2, 4, 3, std::string("mine")}, env_of({{"SLURM_PROCID", "13"}, {"SLURM_NTASKS", "64"}}));
    CHECK(id.rank == 2);
    CHECK(id.ranks == 4);
    CHECK(id.device == 3);
    CHECK(id.run == "mine");
    CHECK(id.rank_source == "given");
}

TEST_CASE("Open MPI, PMIx and an Indexed Job") {
    auto id = resolve_rank_identity(
        {},
        env_of({{"OMPI_COMM_WORLD_RANK", "3"}, {"OMPI_COMM_WORLD_SIZE", "8"}, {"OMPI_COMM_WORLD_LOCAL_RANK", "3"}}));
    CHECK(id.rank == 3);
    CHECK(id.ranks == 8);
    CHECK(id.device == 3);
    CHECK(id.run == "cumemctl");
    id = resolve_rank_identity({std::nullopt, 4, std::nullopt, std::nullopt}, env_of({{"PMIX_RANK", "1"}}));
    CHECK(id.rank == 1);
    CHECK(id.device == 0);
    CHECK(id.device_source == "default");
    id =
        resolve_rank_identity({std::nullopt, 16, std::nullopt, std::nullopt}, env_of({{"JOB_COMPLETION_INDEX", "15"}}));
    CHECK(id.rank == 15);
    CHECK(id.rank_source == "JOB_COMPLETION_INDEX");
    CHECK(usage_message({}, env_of({{"JOB_COMPLETION_INDEX", "1"}})).find("number of ranks is unknown") !=
          std::string::npos);
}

TEST_CASE("usage errors: no rank, a rank out of range, a bad number, a bad run name") {
    CHECK(usage_message({}, env_of({})).find("rank's number is unknown") != std::string::npos);
    CHECK(usage_message({4, 4, std::nullopt, std::nullopt}, env_of({})) == "rank 4 is outside 0-3 (4 ranks)");
    CHECK(usage_message({0, 0, std::nullopt, std::nullopt}, env_of({})) == "invalid number of ranks 0");
    CHECK(usage_message({}, env_of({{"SLURM_PROCID", "x1"}, {"SLURM_NTASKS", "2"}})) ==
          "SLURM_PROCID is 'x1', not a number of 0 or more");
    CHECK(usage_message({0, 2, std::nullopt, std::string("../x")}, env_of({})) == "invalid run name '../x'");
    CHECK(usage_message({0, 2, std::nullopt, std::string(".hidden")}, env_of({})) == "invalid run name '.hidden'");
    CHECK_NOTHROW(check_run_name("job-12.a_b"));
}

TEST_CASE("through PMIx the server numbers the ranks, and the namespace names the run where Slurm does not") {
    const PmixView view{2, 6, 1, "prterun-vm-4242@1"};
    RankIdentity id = pmix_rank_identity({}, view, env_of({}));
    CHECK(id.rank == 2);
    CHECK(id.ranks == 6);
    CHECK(id.rank_source == "PMIx");
    CHECK(id.device == 1);
    CHECK(id.device_source == "PMIX_LOCAL_RANK");
    CHECK(id.run == "prterun-vm-4242-1");  // '@' is no run-name character
    id = pmix_rank_identity({std::nullopt, std::nullopt, 0, std::nullopt}, view, env_of({{"SLURM_JOB_ID", "77"}}));
    CHECK(id.device == 0);
    CHECK(id.device_source == "given");
    CHECK(id.run == "77");
    CHECK(pmix_rank_identity({}, PmixView{0, 1, std::nullopt, ".x"}, env_of({})).run == "pmix.x");
    // A given rank or count must be the server's.
    CHECK_THROWS_WITH_AS(pmix_rank_identity({3, std::nullopt, std::nullopt, std::nullopt}, view, env_of({})),
                         doctest::Contains("the PMIx server rank 2 of 6"), Error);
    CHECK_NOTHROW(pmix_rank_identity({2, 6, std::nullopt, std::nullopt}, view, env_of({})));
    CHECK_THROWS_AS(pmix_rank_identity({}, PmixView{6, 6, std::nullopt, "x"}, env_of({})), Error);
}
