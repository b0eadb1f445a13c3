// The hidden subcommand that `create --import-check` starts as its second process: it takes the handle
// from the socket on descriptor 3, imports, maps and checks it, and answers on the same socket. Its
// exit code is the check's; it prints nothing (its report went over the socket).
#include "command.hpp"
#include "commands.hpp"
#include "gpu/diagnosis/imex_channel_access.hpp"
#include "gpu/vmm/import_check.hpp"
#include "gpu/device/memory_props.hpp"
#include "ipc/process.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

struct ImportCheckOptions {
    int socket_fd = kImportCheckSocketFd;
    int device = 0;
    std::uint64_t size = 0;
    std::string handle_type = "posix-fd";
    std::uint64_t seed = 0;
    std::uint64_t alignment = 0;
    std::string imex_channel_dir = imex::kImexChannelDir;
};

Report run_import_check_command(const ImportCheckOptions& o, const Globals& globals) {
    UniqueFd socket(o.socket_fd);
    ipc::die_with_parent();
    Report report;
    report.command = kImportCheckCommand;
    ImportCheckRequest request;
    request.device = o.device;
    request.size = o.size;
    request.seed = o.seed;
    request.alignment = o.alignment;
    request.imex_channel_dir = o.imex_channel_dir;
    request.handle_type =
        o.handle_type == "fabric" ? CU_MEM_HANDLE_TYPE_FABRIC : CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
    Driver driver = open_driver(globals);
    const ImportCheckResult result = serve_import_check(driver, socket.get(), request);
    if (result.problem) {
        report.exit_code = result.problem->exit_code == ExitCode::ok ? ExitCode::failed : result.problem->exit_code;
    } else if (!result.ok()) {
        report.exit_code = ExitCode::failed;
    }
    return report;
}

}  // namespace

void register_import_check(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<ImportCheckOptions>();
    CLI::App* app = root.add_subcommand(kImportCheckCommand, "internal: the second process of create --import-check");
    app->group("");  // hidden from --help
    app->add_option("--socket-fd", opts->socket_fd)->required();
    app->add_option("--device", opts->device)->required();
    app->add_option("--size", opts->size)->required();
    app->add_option("--handle-type", opts->handle_type)->required()->check(CLI::IsMember({"posix-fd", "fabric"}));
    app->add_option("--seed", opts->seed)->required();
    app->add_option("--alignment", opts->alignment)->required();
    app->add_option("--imex-channel-dir", opts->imex_channel_dir);
    app->callback(
        [opts, &globals, &runner] { runner = [opts, &globals] { return run_import_check_command(*opts, globals); }; });
}

}  // namespace cumemctl::cmd
