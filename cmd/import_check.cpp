// The hidden subcommand that `create --import-check` starts as its second process: it initialises the
// driver and the device's context, takes the handle (with its size and seed) from the socket on
// descriptor 3, imports, maps and checks it, and answers on the same socket. Its
// exit code is the check's; it prints nothing (its report went over the socket).
#include "command.hpp"
#include "commands.hpp"
#include "gpu/diagnosis/imex_channel_access.hpp"
#include "gpu/vmm/import_check.hpp"
#include "gpu/device/memory_props.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

struct ImportCheckOptions {
    int socket_fd = kImportCheckSocketFd;
    int device = 0;
    std::string handle_type = "posix-fd";
    std::string imex_channel_dir = kImexChannelDir;
};

Report run_import_check_command(const ImportCheckOptions& o, const Globals& globals) {
    return run_second_process(kImportCheckCommand, o.socket_fd, [&](int socket) -> std::optional<Problem> {
        ImportCheckRequest request;
        request.device = o.device;
        request.imex_channel_dir = o.imex_channel_dir;
        request.handle_type =
            o.handle_type == "fabric" ? CU_MEM_HANDLE_TYPE_FABRIC : CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
        Driver driver = open_driver(globals);
        const ImportCheckResult result = serve_import_check(driver, socket, request);
        if (result.problem) return result.problem;
        if (!result.ok()) return Problem{.exit_code = ExitCode::failed, .message = "the pattern check failed"};
        return std::nullopt;
    });
}

}  // namespace

void register_import_check(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<ImportCheckOptions>();
    CLI::App* app = root.add_subcommand(kImportCheckCommand, "internal: the second process of create --import-check");
    app->group("");  // hidden from --help
    app->add_option("--socket-fd", opts->socket_fd)->required();
    app->add_option("--device", opts->device)->required();
    app->add_option("--handle-type", opts->handle_type)->required()->check(CLI::IsMember({"posix-fd", "fabric"}));
    app->add_option("--imex-channel-dir", opts->imex_channel_dir);
    app->callback(
        [opts, &globals, &runner] { runner = [opts, &globals] { return run_import_check_command(*opts, globals); }; });
}

}  // namespace cumemctl::cmd
