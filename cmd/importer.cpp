// `cumemctl __importer` (hidden): the second process of every IPC check (gpu/importer). It initialises
// the driver and retains the context of --device, then answers the requests that come over the socket
// at --socket-fd (an import check, a pool import) until the first process closes its end. Its exit
// code is that of the first answer with a problem (0 when every one passed); its reports went over the
// socket, and its own stdout is discarded.
#include "base/setting.hpp"
#include "command.hpp"
#include "ipc/child_command_line.hpp"
#include "gpu/importer/importer.hpp"
#include "gpu/pool/pool_ipc.hpp"
#include "gpu/vmm/import_check.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

// The importer's services: every check that uses it.
constexpr ImporterService kServices[] = {kImportCheckService, kPoolImportService};

struct ImporterOptions {
    int socket_fd = -1;
    int device = 0;
};

}  // namespace

void register_importer(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<ImporterOptions>();
    CLI::App* app = root.add_subcommand(std::string(command_name(Command::importer)),
                                        "internal: the second process of the IPC checks");
    app->group("");  // hidden from --help
    app->add_option(ipc::child_flag(ipc::ChildFlag::socket_fd), opts->socket_fd, "the Unix socket to the first process")
        ->required();
    app->add_option(ipc::child_flag(ipc::ChildFlag::device), opts->device, "the device, as this process sees it")
        ->required();
    app->callback([opts, &globals, &runner] {
        runner = [opts, &globals] {
            return run_second_process(std::string(command_name(Command::importer)), opts->socket_fd, [&](int socket) {
                Driver driver = open_driver(globals);
                return serve_importer(driver, socket, opts->device, kServices);
            });
        };
    });
}

}  // namespace cumemctl::cmd
