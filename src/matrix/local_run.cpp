#include "matrix/local_run.hpp"

#include <chrono>

#include <fmt/format.h>

#include "gpu/device/devices.hpp"
#include "gpu/device/memory_props.hpp"
#include "ipc/child.hpp"
#include "ipc/child_command_line.hpp"
#include "ipc/envelope.hpp"
#include "matrix/pair_diagnosis.hpp"
#include "base/scope_exit.hpp"

namespace cumemctl::matrix {
using namespace gpu;
namespace {

// Takes rank r's answer into the result and the matrix input.
void take_answer(ipc::Envelope& answer, int r, LocalRank& rank, MatrixInput& input) {
    rank.steps = std::move(answer.steps);
    rank.problem = std::move(answer.problem);
    const nlohmann::json& j = answer.result;
    if (!j.is_object()) return;
    try {
        if (j.contains("card") && !j["card"].is_null()) input.cards[r] = card_from_json(j["card"]);
        if (j.contains("row") && !j["row"].is_null()) input.rows[r] = parse_row(j["row"].dump(), input.ranks);
        for (const auto& w : j.value("warnings", nlohmann::json::array()))
            rank.warnings.push_back(w.get<std::string>());
    } catch (const Error& e) {
        input.refused[r] = fmt::format("its answer is not valid: {}", e.what());
    } catch (const nlohmann::json::exception& e) {
        input.refused[r] = fmt::format("its answer is not valid: {}", e.what());
    }
}

}  // namespace

std::vector<std::string> local_rank_arguments(const LocalRequest& request, const std::string& folder, int rank,
                                              int child_device) {
    using ipc::ChildFlag;
    std::vector<std::string> args = ipc::child_arguments(Command::matrix_rank);
    ipc::add_child_option(args, ChildFlag::socket_fd, std::to_string(ipc::kChildSocketFd));
    ipc::add_child_option(args, ChildFlag::dir, folder);
    ipc::add_child_option(args, ChildFlag::run, kLocalRunName);
    ipc::add_child_option(args, ChildFlag::rank, std::to_string(rank));
    ipc::add_child_option(args, ChildFlag::ranks, std::to_string(request.devices.size()));
    ipc::add_child_option(args, ChildFlag::device, std::to_string(child_device));
    ipc::add_child_option(args, ChildFlag::size, std::to_string(request.size));
    ipc::add_child_option(args, ChildFlag::handle_type, handle_type_name(request.handle_type));
    ipc::add_child_option(args, ChildFlag::timeout_ms, std::to_string(request.timeout.count()));
    ipc::add_child_option(args, ChildFlag::imex_channel_dir, request.imex_channel_dir);
    ipc::add_child_option(args, ChildFlag::libcuda, request.libcuda);
    if (request.keep) args.push_back(ipc::child_flag(ChildFlag::keep));
    return args;
}

nlohmann::json rank_answer_json(const RankResult& result) {
    return {{"card", to_json(result.card)}, {"row", to_json(result.row)}, {"warnings", result.warnings}};
}

namespace {

// Starts rank `r` on its device, connected to this process.
ipc::Child start_rank(const DriverApi& api, const LocalRequest& request, const RendezvousDir& dir, int r,
                      LocalRank& rank) {
    // A fabric handle is made to cross nodes, so a rank that sees only its own GPU shows what a rank on
    // another node sees. A posix-fd handle stays within a node, and its import may need the device that
    // holds the memory: those ranks see every GPU and use their own by its ordinal.
    const ChildDeviceView view = request.handle_type == CU_MEM_HANDLE_TYPE_FABRIC ? child_device_view(api, rank.device)
                                                                                  : ChildDeviceView{rank.device, {}};
    ipc::SpawnRequest spawn;
    spawn.executable = request.executable;
    spawn.args = local_rank_arguments(request, dir.path(), r, view.ordinal);
    spawn.env = view.env;
    ipc::Child child = ipc::spawn_connected(std::move(spawn));
    rank.pid = child.process.pid();
    return child;
}

// Rank `r`'s answer and exit status, into `out`; a rank that failed before its run gets a row whose
// every cell says why.
void collect_rank(const LocalRequest& request, int r, ipc::Child& child, LocalResult& out) {
    // A rank waits at most three times the timeout (cards, rows, the end), and then answers.
    const ipc::Timeout answer_limit = request.timeout * 3 + ipc::Timeout{30000};
    auto& rank = out.ranks[static_cast<std::size_t>(r)];
    std::optional<Problem> lost;
    try {
        ipc::Envelope answer = ipc::receive_envelope(child.socket.get(), answer_limit);
        take_answer(answer, r, rank, out.input);
        // The matrix names the device as this process counts them (the rank saw only its own, as 0).
        if (auto card = out.input.cards.find(r); card != out.input.cards.end()) card->second.device = rank.device;
    } catch (const Error& e) {
        lost = e.problem();
    }
    std::optional<int> ended;
    if (!lost) ended = child.process.wait(request.timeout);
    rank.exit_status = ipc::exit_code_of(ended ? *ended : child.process.kill_and_wait());
    if (lost) {
        lost->message = fmt::format("rank {} (pid {}) gave no answer (exit status {}): {}", r, rank.pid,
                                    rank.exit_status, lost->message);
        rank.problem = std::move(lost);
    }
    if (rank.problem && !out.input.rows.contains(r)) {
        Row row{kLocalRunName, r, "", {}};
        for (int j = 0; j < out.input.ranks; ++j) row.cells.push_back(own_failure_cell(j, *rank.problem));
        out.input.rows[r] = std::move(row);
    }
}

}  // namespace

LocalResult run_local(const DriverApi& api, const LocalRequest& request) {
    LocalResult out;
    RendezvousDir dir = RendezvousDir::make_private();
    // The folder, removed when the run ends unless it is kept.
    const ScopeExit remove_folder([&] {
        if (!request.keep) dir.remove_all();
    });
    out.folder = dir.path();
    const int n = static_cast<int>(request.devices.size());
    out.input.run = kLocalRunName;
    out.input.ranks = n;
    out.input.timeout = request.timeout;
    std::vector<ipc::Child> started;
    std::vector<int> sockets;
    for (int r = 0; r < n; ++r) {
        LocalRank rank;
        rank.rank = r;
        rank.device = request.devices[static_cast<std::size_t>(r)];
        started.push_back(start_rank(api, request, dir, r, rank));
        sockets.push_back(started.back().socket.get());
        out.ranks.push_back(std::move(rank));
    }
    if (request.handle_type == CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) broker_descriptors(sockets, request.timeout);
    for (int r = 0; r < n; ++r) collect_rank(request, r, started[static_cast<std::size_t>(r)], out);
    return out;
}

}  // namespace cumemctl::matrix
