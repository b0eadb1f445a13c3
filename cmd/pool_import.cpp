// `cumemctl __pool-import` (hidden): the second process of create --pool --ipc-check. It imports the
// pool and pointer that the first process sends over the socket at --socket-fd, checks the pattern,
// frees its import and reports its steps back over the same socket; its own stdout is discarded.
#include "command.hpp"
#include "commands.hpp"
#include "gpu/pool/pool_ipc.hpp"
#include "ipc/process.hpp"

namespace cumemctl::cmd {
using namespace gpu;

void register_pool_import(CLI::App& root, const Globals& globals, Runner& runner) {
    auto socket = std::make_shared<int>(-1);
    CLI::App* app = root.add_subcommand("__pool-import", "internal: the importer of create --pool --ipc-check");
    app->group("");  // hidden from --help
    app->add_option("--socket-fd", *socket, "the Unix socket to the exporter")->required();
    app->callback([socket, &globals, &runner] {
        runner = [socket, &globals] {
            return run_with_driver("__pool-import", globals, [&](Report&, Driver& driver, int) {
                ipc::die_with_parent();
                serve_pool_import(driver.api(), *socket, kPoolImportTimeout);
            });
        };
    });
}

}  // namespace cumemctl::cmd
