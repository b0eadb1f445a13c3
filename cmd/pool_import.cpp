// `cumemctl __pool-import` (hidden): the second process of create --pool --ipc-check. It initialises
// the driver and retains the context of --device, then imports the pool and pointer that the first
// process sends over the socket at --socket-fd, checks the pattern, frees its import and reports its
// steps back over the same socket; its own stdout is discarded.
#include "command.hpp"
#include "commands.hpp"
#include "gpu/pool/pool_ipc.hpp"

namespace cumemctl::cmd {
using namespace gpu;
namespace {

struct PoolImportOptions {
    int socket_fd = -1;
    int device = 0;
};

}  // namespace

void register_pool_import(CLI::App& root, const Globals& globals, Runner& runner) {
    auto opts = std::make_shared<PoolImportOptions>();
    CLI::App* app = root.add_subcommand(kPoolImportCommand, "internal: the importer of create --pool --ipc-check");
    app->group("");  // hidden from --help
    app->add_option("--socket-fd", opts->socket_fd, "the Unix socket to the exporter")->required();
    app->add_option("--device", opts->device, "the pool's device, as this process sees it")->required();
    app->callback([opts, &globals, &runner] {
        runner = [opts, &globals] {
            return run_second_process(kPoolImportCommand, opts->socket_fd, [&](int socket) {
                Driver driver = open_driver(globals);
                driver.init();
                serve_pool_import(driver.api(), socket, opts->device, kPoolImportTimeout);
                return std::optional<Problem>{};
            });
        };
    });
}

}  // namespace cumemctl::cmd
