// `cumemctl fabric-matrix`: every rank (one process and one GPU each) makes memory, exports it and
// reads every other rank's memory through its handle; the answer is an N x N matrix with the read
// bandwidth of every pair and a diagnosis for every pair that fails. Three ways in: --local (one rank
// per GPU of this node, started here), --dir (this process is one rank of a distributed run), and
// --summary (the matrix of a run whose files were kept). The core is src/matrix/.
#include <algorithm>
#include <charconv>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "command.hpp"
#include "command_table.hpp"
#include "pmix/pmix_client.hpp"
#include "held_errors.hpp"
#include "shared_gpu.hpp"
#include "gpu/device/device_selector.hpp"
#include "gpu/device/memory_props.hpp"
#include "gpu/diagnosis/imex_channel_access.hpp"
#include "matrix/local_run.hpp"
#include "matrix/matrix.hpp"
#include "matrix/matrix_results.hpp"
#include "matrix/rank_run.hpp"
#include "steps/step_json.hpp"
#include "util/size.hpp"

namespace cumemctl::cmd {
using namespace gpu;
using namespace imex;
namespace {

using namespace cumemctl::matrix;

// The options as typed.
struct MatrixOptions {
    bool local_given = false;
    std::string local;  // N or all ("" when --local came without a value: all)
    std::string dir;
    std::string summary;
    std::optional<int> rank;
    std::optional<int> ranks;
    std::optional<std::string> device;  // one device: a CUDA ordinal, a UUID or a PCI bus id
    std::optional<std::string> run;
    std::string size;
    std::string handle_type = "fabric";
    double timeout = 60;
    bool keep = false;
    std::string rendezvous = "auto";
    std::string libpmix;
    bool all_report = false;  // every rank's report holds the whole matrix, not rank 0's alone

    struct Plan {
        enum class Mode { local, rank, summary } mode = Mode::local;
        std::optional<int> local_count;  // nullopt: all
        RankIdentity id;                 // rank mode, through a folder
        // Rank mode through PMIx: the identity comes from the server at run time. With auto and a
        // folder too, the folder serves where the library does not load.
        bool pmix = false;
        bool folder_fallback = false;
        RankGiven given;
        std::optional<gpu::DeviceList> device;  // --device, looked up once the driver is loaded
        std::uint64_t size = 0;
        CUmemAllocationHandleType handle_type = CU_MEM_HANDLE_TYPE_FABRIC;
        ipc::Timeout timeout{60000};
        std::string imex_channel_dir = kImexChannelDir;
    };
    Plan check() const;

private:
    void check_mode(Plan& p) const;
    void check_request(Plan& p) const;
    void check_local(Plan& p) const;
    void check_rank(Plan& p) const;
};

// How the ranks meet (--rendezvous), and that one of --local, --dir and --summary is given.
void MatrixOptions::check_mode(Plan& p) const {
    if (rendezvous != "auto" && rendezvous != "pmix" && rendezvous != "dir") {
        throw Error(ExitCode::usage, fmt::format("invalid --rendezvous '{}'", rendezvous),
                    "give --rendezvous auto, pmix or dir");
    }
    // PMIx serves a distributed rank when asked, or (auto) when the launcher set this process up for it.
    const bool distributed = !local_given && summary.empty();
    p.pmix = distributed && (rendezvous == "pmix" || (rendezvous == "auto" && pmix::launched_by_pmix()));
    if (rendezvous == "pmix" && !distributed) {
        throw Error(ExitCode::usage, "--rendezvous pmix is for the ranks of a distributed run",
                    "leave out --local and --summary, and start the ranks with srun --mpi=pmix or mpirun");
    }
    if (rendezvous == "dir" && distributed && dir.empty()) {
        throw Error(ExitCode::usage, "--rendezvous dir needs the folder", "give --dir DIR, a folder every rank sees");
    }
    const int modes = (local_given ? 1 : 0) + (dir.empty() && !p.pmix ? 0 : 1) + (summary.empty() ? 0 : 1);
    if (modes != 1) {
        throw Error(ExitCode::usage, "fabric-matrix takes one of --local, --dir and --summary",
                    "give --local to check this node's GPUs, --dir DIR on every rank of a distributed run, or "
                    "--summary DIR for a run whose files were kept");
    }
}

// What each rank makes and how long it waits: the handle type, --timeout and --size.
void MatrixOptions::check_request(Plan& p) const {
    p.handle_type = parse_handle_type(handle_type);
    if (p.handle_type != CU_MEM_HANDLE_TYPE_FABRIC && p.handle_type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) {
        throw Error(ExitCode::usage, fmt::format("fabric-matrix cannot share '{}' handles", handle_type),
                    "give --handle-type fabric or posix-fd");
    }
    if (!(timeout > 0) || timeout > 86400) {
        throw Error(ExitCode::usage, fmt::format("invalid timeout {}", timeout), "give 0 < --timeout <= 86400 seconds");
    }
    p.timeout = ipc::Timeout{static_cast<std::int64_t>(timeout * 1000)};
    if (!size.empty()) {
        p.size = parse_size(size);
        if (p.size == 0 || p.size > kMaxMatrixSize) {
            throw Error(ExitCode::usage, fmt::format("invalid size '{}'", size), "give a size from 1 byte to 1TiB");
        }
    }
    if (const char* d = std::getenv("CUMEMCTL_IMEX_CHANNEL_DIR"); d != nullptr && *d != '\0') p.imex_channel_dir = d;
}

// --local N or all, which starts its own ranks.
void MatrixOptions::check_local(Plan& p) const {
    p.mode = Plan::Mode::local;
    if (!local.empty() && local != "all") {
        int n = 0;
        const auto [end, ec] = std::from_chars(local.data(), local.data() + local.size(), n);
        if (ec != std::errc() || end != local.data() + local.size() || n < 1) {
            throw Error(ExitCode::usage, fmt::format("invalid --local '{}'", local),
                        "give --local N (ranks, one per GPU, at least 1) or --local all");
        }
        p.local_count = n;
    }
    if (rank || ranks || device || run) {
        throw Error(ExitCode::usage, "--local starts its own ranks: --rank, --ranks, --device and --run do not apply",
                    "leave them out, or use --dir for a distributed run");
    }
}

// One rank of a distributed run: its device, rank and run, and, through a folder, its identity.
void MatrixOptions::check_rank(Plan& p) const {
    p.mode = Plan::Mode::rank;
    if (p.handle_type != CU_MEM_HANDLE_TYPE_FABRIC) {
        throw Error(ExitCode::usage, "posix-fd handles cannot travel through a folder",
                    "use --handle-type fabric with --dir, or --local --handle-type posix-fd on one node");
    }
    if (device) {
        p.device = parse_device_list(*device);
        if (!p.device->names_one()) {
            throw Error(ExitCode::usage, fmt::format("a rank has one device, not '{}'", *device),
                        "give --device N, a UUID (GPU-...) a PCI bus id or nvidiaN");
        }
    }
    // A UUID or a bus id is the given device too: its ordinal comes once the driver is loaded.
    p.given = RankGiven{rank, ranks, p.device ? p.device->ordinal().value_or(0) : std::optional<int>(), run};
    if (run) check_run_name(*run);
    p.folder_fallback = p.pmix && rendezvous == "auto" && !dir.empty();
    // Through a folder only, the identity is known now; through PMIx, from the server at run time.
    if (!p.pmix) p.id = resolve_rank_identity(p.given, process_environment());
}

MatrixOptions::Plan MatrixOptions::check() const {
    Plan p;
    check_mode(p);
    check_request(p);
    if (local_given) {
        check_local(p);
    } else if (!summary.empty()) {
        p.mode = Plan::Mode::summary;
        if (run) check_run_name(*run);
    } else {
        check_rank(p);
    }
    return p;
}

// The exit code of a matrix: 0 when every pair passed, else 1 with an error that says how many failed.
void judge(Report& report, const Matrix& m) {
    if (m.passed()) return;
    report.add_error(
        Problem{.message = fmt::format("{} of {} pairs of the fabric matrix failed", m.failed_pairs, m.ranks * m.ranks),
                .remedy = "the failing pairs table (or results.matrix) gives each pair's diagnosis"});
}

// The results of a run in one of its ways, with its matrix where the report holds it.
template <class Mode>
MatrixResults matrix_results(Mode mode, std::optional<Matrix> matrix) {
    MatrixResults results;
    results.mode = std::move(mode);
    results.matrix = std::move(matrix);
    return results;
}

// A rank's own problem as the command reports it: no support stays exit 3, anything else is a failure.
Problem as_rank_failure(Problem p) {
    if (p.exit_code != ExitCode::unavailable && p.exit_code != ExitCode::usage) p.exit_code = ExitCode::failed;
    return p;
}

void run_local_mode(Report& report, Driver& driver, int count, const MatrixOptions& o, const MatrixOptions::Plan& p,
                    const nvml::Library& nvml) {
    const int n = p.local_count.value_or(count);
    if (n > count) {
        throw Error(ExitCode::unavailable,
                    fmt::format("--local {} asks for {} GPUs, and this node has {}", n, n, count),
                    fmt::format("give --local {} or less, or --local all", count));
    }
    require_handle_support(driver.api(), 0, p.handle_type);
    LocalRequest request;
    for (int d = 0; d < n; ++d) request.devices.push_back(d);
    request.size = p.size;
    request.handle_type = p.handle_type;
    request.timeout = p.timeout;
    request.keep = o.keep;
    request.imex_channel_dir = p.imex_channel_dir;
    request.libcuda = driver.info().library;
    // The frame's watch names whoever else shares the GPUs while the ranks measure (its own ranks are ours).
    LocalResult result;
    const std::size_t errors_before = report.errors.size();
    judging_holds(report, driver.api(), nvml, request.devices, [&] { result = run_local(driver.api(), request); });
    if (report.errors.size() > errors_before) return;  // run_local threw: the error, judged, says why
    const Matrix m = build_matrix(result.input);
    for (const auto& r : result.ranks) {
        for (const auto& w : r.warnings) report.add_warning(fmt::format("rank {}: {}", r.rank, w));
    }
    for (const auto& r : result.ranks) {
        if (r.problem && r.problem->exit_code == ExitCode::unavailable) report.add_error(*r.problem);
    }
    judge(report, m);
    report.set_results(matrix_results(MatrixResults::Local{p.handle_type, result.folder, o.keep, result.ranks}, m));
}

// The rank's identity and meeting place: PMIx where the plan says so and the library loads (with auto
// and a folder, the folder where it does not), else the folder.
struct Meeting {
    std::optional<pmix::Client> client;
    std::optional<RendezvousDir> dir;
    std::unique_ptr<Rendezvous> rendezvous;
    RankIdentity id;
};

Meeting meet(Report& report, const MatrixOptions& o, const MatrixOptions::Plan& p) {
    Meeting m;
    if (p.pmix) {
        try {
            m.client.emplace(pmix::Client::connect(o.libpmix));
        } catch (const Error& e) {
            if (!p.folder_fallback) throw;
            report.add_warning(fmt::format("PMIx was not used ({}): the ranks meet in {}", e.problem().message, o.dir),
                               e.problem().remedy);
        }
    }
    if (m.client) {
        m.id = pmix_rank_identity(
            p.given,
            PmixView{static_cast<int>(m.client->rank()), static_cast<int>(m.client->job_size()),
                     m.client->local_rank() ? std::optional<int>(*m.client->local_rank()) : std::nullopt,
                     m.client->nspace()},
            process_environment());
        m.rendezvous = std::make_unique<PmixRendezvous>(*m.client);
        return m;
    }
    m.id = p.pmix ? resolve_rank_identity(p.given, process_environment()) : p.id;
    m.dir.emplace(RendezvousDir::open(o.dir));
    m.rendezvous = std::make_unique<FolderRendezvous>(*m.dir);
    return m;
}

// Whether `pid` is a rank of this run on this rank's node: its card gives this rank's host and that pid.
bool rank_here(const RankResult& result, unsigned pid) {
    return std::any_of(result.cards.begin(), result.cards.end(), [&](const auto& rank_card) {
        const Card& c = rank_card.second;
        return c.host == result.card.host && c.pid > 0 && static_cast<unsigned>(c.pid) == pid;
    });
}

void run_rank_mode(Report& report, Driver& driver, int count, const MatrixOptions& o, const MatrixOptions::Plan& p,
                   const nvml::Library& nvml) {
    Meeting meeting = meet(report, o, p);
    if (p.device) meeting.id.device = p.device->select(driver.api(), count).front();
    const RankIdentity& id = meeting.id;
    if (id.device >= count) {
        throw Error(ExitCode::unavailable, fmt::format("device {} does not exist ({} devices)", id.device, count),
                    "give --device, or start one rank per GPU");
    }
    Rendezvous& rendezvous = *meeting.rendezvous;
    RankRequest request;
    request.nvml = &nvml;
    request.id = id;
    request.size = p.size;
    request.handle_type = p.handle_type;
    request.timeout = p.timeout;
    request.keep = o.keep;
    request.imex_channel_dir = p.imex_channel_dir;
    request.driver_version = driver.version();
    RankResult result;
    // The frame's watch on this rank's GPU: whoever else shared it while the rank measured, named with
    // the rank that saw them, but never the job's own ranks on this node (a rank reading this GPU's
    // memory may show on it).
    std::optional<SharedGpuWatch> watch;
    if (running_does(Does::measures)) {
        watch.emplace(driver.api(), nvml, std::vector<int>{id.device}, fmt::format("fabric-matrix rank {}", id.rank),
                      [&result](int, unsigned pid) { return rank_here(result, pid); });
    }
    run_rank(driver.api(), rendezvous, request, result);
    if (watch) watch->report_to(report);
    MatrixInput input{id.run, id.ranks, result.cards, result.rows, result.refused, p.timeout};
    const Matrix m = build_matrix(input);
    const bool whole = id.rank == 0 || o.all_report;
    MatrixResults::Rank part{.id = id,
                             .rendezvous = rendezvous.kind(),
                             .where = rendezvous.where(),
                             .folder = meeting.dir ? meeting.dir->path() : "",
                             .handle_type = p.handle_type,
                             .card = result.card,
                             .row = result.row,
                             .steps = result.steps,
                             .cards = {},
                             .rows = {},
                             .unreadable = {}};
    if (whole) {
        for (const auto& [r, c] : result.cards) part.cards.push_back(c);
        for (const auto& [r, row] : result.rows) part.rows.push_back(row);
    }
    // Through PMIx the ranks share the launcher's output stream and have no folder for files: rank 0
    // alone reports (the whole matrix), every rank with --all-report; the others say only their errors.
    report.delivery.stdout_quiet = rendezvous.kind() == RendezvousKind::pmix && id.rank != 0 && !o.all_report;
    for (const auto& w : result.warnings) report.add_warning(w);
    if (result.problem) report.add_error(as_rank_failure(*result.problem));
    judge(report, m);
    report.set_results(matrix_results(std::move(part), whole ? std::optional<Matrix>(m) : std::nullopt));
}

void run_summary_mode(Report& report, const MatrixOptions& o) {
    RendezvousDir dir = RendezvousDir::open(o.summary);
    std::string run;
    if (o.run) {
        run = *o.run;
    } else {
        const auto runs = runs_in_folder(dir);
        if (runs.size() != 1) {
            throw Error(ExitCode::usage,
                        runs.empty() ? fmt::format("{} holds no fabric-matrix run", dir.path())
                                     : fmt::format("{} holds {} runs: {}", dir.path(), runs.size(),
                                                   fmt::format("{}", fmt::join(runs, ", "))),
                        "give --run NAME");
        }
        run = runs.front();
    }
    MatrixInput input = read_folder(dir, run);
    input.timeout = ipc::Timeout{static_cast<std::int64_t>(o.timeout * 1000)};
    const Matrix m = build_matrix(input);
    judge(report, m);
    report.set_results(matrix_results(MatrixResults::Summary{run, dir.path()}, m));
}

Report run_fabric_matrix(const MatrixOptions& o, const Globals& globals) {
    return run_checked("fabric-matrix", o, [&](Report& report, const MatrixOptions::Plan& p) {
        if (p.mode == MatrixOptions::Plan::Mode::summary) return run_summary_mode(report, o);
        // A rank started for PMIx that is not rank 0 writes nothing on the launcher's shared stream, even
        // when it fails before it meets the others (its errors still go to stderr); once it has met them,
        // run_rank_mode says it again from the way they met (a folder after all: every rank reports).
        if (const char* r = std::getenv("PMIX_RANK"); p.pmix && !o.all_report && r != nullptr && std::string(r) != "0")
            report.delivery.stdout_quiet = true;
        Driver driver = open_driver(globals);
        report.driver = driver.info();
        const int count = driver.init();
        if (p.mode == MatrixOptions::Plan::Mode::local)
            return run_local_mode(report, driver, count, o, p, open_nvml(globals));
        run_rank_mode(report, driver, count, o, p, open_nvml(globals));
    });
}

}  // namespace

void register_fabric_matrix(CLI::App& root, const Globals& globals, Runner& runner) {
    auto o = std::make_shared<MatrixOptions>();
    CLI::App* app = root.add_subcommand(
        "fabric-matrix", "check that every GPU can import, map and read every other GPU's memory (fabric handles)");
    CLI::Option* local =
        app->add_option("--local", o->local, "one rank per GPU of this node: N GPUs or all (the default)")
            ->expected(0, 1)
            ->type_name("[N|all]");
    app->add_option("--dir", o->dir, "this process is one rank; the rendezvous folder every rank sees")
        ->type_name("DIR");
    app->add_option("--summary", o->summary, "print the matrix of a run whose files are in DIR (--keep)")
        ->type_name("DIR");
    app->add_option("--rank", o->rank,
                    "this rank (default: from SLURM_PROCID, OMPI_COMM_WORLD_RANK, PMIX_RANK, "
                    "JOB_COMPLETION_INDEX)");
    app->add_option("--ranks", o->ranks, "the number of ranks (default: SLURM_NTASKS, OMPI_COMM_WORLD_SIZE)");
    app->add_option("-d,--device", o->device,
                    "this rank's device: a CUDA ordinal, a UUID (GPU-...), a PCI bus id or nvidiaN (default: the local "
                    "rank, else 0)");
    app->add_option("--run", o->run, "the run's name, which keeps runs in one folder apart (default: SLURM_JOB_ID)");
    app->add_option("--size", o->size, "bytes per rank (default: one recommended granule; rounded up)");
    app->add_option("--handle-type", o->handle_type, "fabric, or posix-fd (with --local)")
        ->check(CLI::IsMember({"fabric", "posix-fd"}))
        ->capture_default_str();
    app->add_option("--timeout", o->timeout, "seconds each wait for the other ranks may take")->capture_default_str();
    app->add_flag("--keep", o->keep, "leave the files in the rendezvous folder (for --summary)");
    app->add_option("--rendezvous", o->rendezvous,
                    "where distributed ranks meet: pmix (the launcher's PMIx server), dir (--dir), or auto (PMIx "
                    "where the launcher set it up, else --dir)")
        ->check(CLI::IsMember({"auto", "pmix", "dir"}))
        ->capture_default_str();
    app->add_flag("--all-report", o->all_report, "every rank's report holds the whole matrix (default: rank 0's)");
    app->add_option("--libpmix", o->libpmix, "the PMIx client library (default: $CUMEMCTL_LIBPMIX, else libpmix.so.2)")
        ->type_name("PATH");
    app->callback([o, local, &globals, &runner] {
        o->local_given = local->count() > 0;
        runner = [o, &globals] { return run_fabric_matrix(*o, globals); };
    });
}

}  // namespace cumemctl::cmd
