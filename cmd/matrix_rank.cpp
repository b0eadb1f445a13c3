// The hidden subcommand that fabric-matrix --local starts once per GPU: one rank, on the device it
// sees (CUDA_VISIBLE_DEVICES names only its GPU), meeting the others in the folder the coordinator
// made; with posix-fd handles its descriptor travels over the socket on descriptor 3. It answers on
// that socket (its steps, its problem, its card and row) and prints nothing.
#include "base/setting.hpp"
#include "command.hpp"
#include "ipc/child_command_line.hpp"
#include "gpu/device/memory_props.hpp"
#include "gpu/diagnosis/imex_channel_access.hpp"
#include "ipc/envelope.hpp"
#include "matrix/local_run.hpp"

namespace cumemctl::cmd {
using namespace gpu;
using namespace imex;
namespace {

struct MatrixRankOptions {
    int socket_fd = ipc::kChildSocketFd;
    std::string dir;
    std::string run = matrix::kLocalRunName;
    int rank = 0;
    int ranks = 1;
    int device = 0;
    std::uint64_t size = 0;
    std::string handle_type = "fabric";
    std::int64_t timeout_ms = 60000;
    std::string imex_channel_dir = kImexChannelDir;
    bool keep = false;
};

// What sets the rank's exit code: its own problem, else a cell of its row that failed (exit 1).
std::optional<Problem> exit_problem(const std::optional<Problem>& problem, const matrix::RankResult& result) {
    if (problem) return problem;
    for (const auto& c : result.row.cells) {
        if (!c.passed()) return Problem{.message = "a cell of the rank's row failed"};
    }
    return std::nullopt;
}

// One rank: runs it, then answers on `socket` (always, whatever stopped it), and returns what sets its
// exit code.
std::optional<Problem> serve_matrix_rank(const MatrixRankOptions& o, const Globals& globals, int socket) {
    const auto type = parse_handle_type(o.handle_type);
    const matrix::DescriptorExchange exchange(socket);
    matrix::RankResult result;
    std::optional<Problem> problem;
    bool ran = false;
    try {
        Driver driver = open_driver(globals);
        driver.init();
        const matrix::RendezvousDir dir = matrix::RendezvousDir::open(o.dir);
        matrix::RankRequest request;
        request.id = matrix::RankIdentity{o.rank, o.ranks, o.device, o.run, "coordinator", "coordinator"};
        request.size = o.size;
        request.handle_type = type;
        request.timeout = ipc::Timeout{o.timeout_ms};
        request.keep = o.keep;
        request.imex_channel_dir = o.imex_channel_dir;
        request.driver_version = driver.version();
        if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) request.exchange = &exchange;
        const nvml::Library nvml = open_nvml(globals);
        request.nvml = &nvml;
        ran = true;
        matrix::FolderRendezvous rendezvous(dir);
        matrix::run_rank(driver.api(), rendezvous, request, result);
        problem = result.problem;
    } catch (const Error& e) {
        problem = e.problem();
    } catch (const std::exception& e) {
        problem = internal_error(e.what());
    }
    try {
        if (type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR && !exchange.offered())
            exchange.offer(o.rank, -1, problem);
        ipc::Envelope answer;
        answer.steps = result.steps;
        answer.problem = problem;
        if (ran) answer.result = matrix::rank_answer_json(result);
        ipc::send_envelope(socket, answer);
    } catch (const Error&) {
        // The coordinator has gone: there is no one left to tell.
    }
    return exit_problem(problem, result);
}

}  // namespace

void register_matrix_rank(CLI::App& root, const Globals& globals, Runner& runner) {
    auto o = std::make_shared<MatrixRankOptions>();
    CLI::App* app = root.add_subcommand(std::string(command_name(Command::matrix_rank)),
                                        "internal: one rank of fabric-matrix --local");
    app->group("");  // hidden from --help
    app->add_option(ipc::child_flag(ipc::ChildFlag::socket_fd), o->socket_fd)->required();
    app->add_option(ipc::child_flag(ipc::ChildFlag::dir), o->dir)->required();
    app->add_option(ipc::child_flag(ipc::ChildFlag::run), o->run);
    app->add_option(ipc::child_flag(ipc::ChildFlag::rank), o->rank)->required();
    app->add_option(ipc::child_flag(ipc::ChildFlag::ranks), o->ranks)->required();
    app->add_option(ipc::child_flag(ipc::ChildFlag::device), o->device)->required();
    app->add_option(ipc::child_flag(ipc::ChildFlag::size), o->size);
    app->add_option(ipc::child_flag(ipc::ChildFlag::handle_type), o->handle_type)
        ->check(CLI::IsMember({"posix-fd", "fabric"}));
    app->add_option(ipc::child_flag(ipc::ChildFlag::timeout_ms), o->timeout_ms);
    app->add_option(ipc::child_flag(ipc::ChildFlag::imex_channel_dir), o->imex_channel_dir);
    app->add_flag(ipc::child_flag(ipc::ChildFlag::keep), o->keep);
    app->callback([o, &globals, &runner] {
        runner = [o, &globals] {
            return run_second_process(std::string(command_name(Command::matrix_rank)), o->socket_fd,
                                      [&](int socket) { return serve_matrix_rank(*o, globals, socket); });
        };
    });
}

}  // namespace cumemctl::cmd
