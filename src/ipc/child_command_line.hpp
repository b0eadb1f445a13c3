// A second process's command line: the flags that the first process writes and that cmd/'s internal
// commands (the importer, imex-setup --verify's process, a --local rank) read, spelled in one table,
// child_flag, which both sides use.
#pragma once

#include <string>
#include <vector>

#include "base/setting.hpp"

namespace cumemctl::ipc {

// What a first process tells its second on the command line.
enum class ChildFlag {
    socket_fd,         // the connected socket's descriptor number
    device,            // the device, as the second process sees it
    libcuda,           // the driver library the first process loaded
    imex_channel_dir,  // the IMEX channel folder
    uid,               // the user and group to become (imex-setup --verify --owner)
    gid,
    user,
    group,
    dir,          // a rank's rendezvous folder
    run,          // the run's name
    rank,         // this rank
    ranks,        // how many ranks
    size,         // the bytes each rank offers
    handle_type,  // posix-fd or fabric
    timeout_ms,   // how long a rank waits for the others
    keep,         // keep the rendezvous files (a flag without a value)
};

// The flag as the command line spells it: "--socket-fd".
std::string child_flag(ChildFlag flag);

// A second process's argv after argv[0], begun: the hidden command it runs ("__importer").
std::vector<std::string> child_arguments(Command command);

// `args` with the flag and its value added.
void add_child_option(std::vector<std::string>& args, ChildFlag flag, std::string value);

}  // namespace cumemctl::ipc
