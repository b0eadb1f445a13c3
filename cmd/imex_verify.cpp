// `cumemctl __imex-verify` (hidden): the second process of imex-setup --verify. It drops to --uid and
// --gid (with --user's supplementary groups) before it loads the driver, makes and exports one
// fabric-handle allocation, and answers over the socket at --socket-fd; it prints nothing.
#include "base/setting.hpp"
#include "command.hpp"
#include "ipc/child_command_line.hpp"
#include "gpu/diagnosis/channel_verify.hpp"
#include "ipc/process.hpp"

namespace cumemctl::cmd {
using namespace gpu;
using namespace imex;
namespace {

struct ImexVerifyOptions {
    int socket_fd = ipc::kChildSocketFd;
    std::string device = "0";
    std::string imex_channel_dir = imex::kImexChannelDir;
    std::optional<unsigned> uid;
    std::optional<unsigned> gid;
    std::string user;
    std::string group;
};

Report run_imex_verify_command(const ImexVerifyOptions& o, const Globals& globals) {
    return run_second_process(std::string(command_name(Command::imex_verify)), o.socket_fd, [&](int socket) {
        FabricVerifyRequest request;
        request.libcuda = choose_libcuda(globals.libcuda);
        request.device = o.device;
        request.imex_channel_dir = o.imex_channel_dir;
        if (o.uid && o.gid) request.as = Owner{*o.uid, *o.gid, o.user, o.group};
        return serve_fabric_verify(request, socket).problem;
    });
}

}  // namespace

void register_imex_verify(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<ImexVerifyOptions>();
    CLI::App* app = root.add_subcommand(std::string(command_name(Command::imex_verify)),
                                        "internal: the second process of imex-setup --verify");
    app->group("");  // hidden from --help
    app->add_option(ipc::child_flag(ipc::ChildFlag::socket_fd), opts->socket_fd)->required();
    app->add_option(ipc::child_flag(ipc::ChildFlag::device), opts->device)->required();
    app->add_option(ipc::child_flag(ipc::ChildFlag::imex_channel_dir), opts->imex_channel_dir);
    app->add_option(ipc::child_flag(ipc::ChildFlag::uid), opts->uid);
    app->add_option(ipc::child_flag(ipc::ChildFlag::gid), opts->gid);
    app->add_option(ipc::child_flag(ipc::ChildFlag::user), opts->user);
    app->add_option(ipc::child_flag(ipc::ChildFlag::group), opts->group);
    app->callback(
        [opts, &globals, &runner] { runner = [opts, &globals] { return run_imex_verify_command(*opts, globals); }; });
}

}  // namespace cumemctl::cmd
