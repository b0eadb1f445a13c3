#include "ipc/child_command_line.hpp"

#include <utility>

namespace cumemctl::ipc {

std::string child_flag(ChildFlag flag) {
    switch (flag) {
        case ChildFlag::socket_fd:
            return "--socket-fd";
        case ChildFlag::device:
            return "--device";
        case ChildFlag::libcuda:
            return "--libcuda";
        case ChildFlag::imex_channel_dir:
            return "--imex-channel-dir";
        case ChildFlag::uid:
            return "--uid";
        case ChildFlag::gid:
            return "--gid";
        case ChildFlag::user:
            return "--user";
        case ChildFlag::group:
            return "--group";
        case ChildFlag::dir:
            return "--dir";
        case ChildFlag::run:
            return "--run";
        case ChildFlag::rank:
            return "--rank";
        case ChildFlag::ranks:
            return "--ranks";
        case ChildFlag::size:
            return "--size";
        case ChildFlag::handle_type:
            return "--handle-type";
        case ChildFlag::timeout_ms:
            return "--timeout-ms";
        case ChildFlag::keep:
            return "--keep";
    }
    return "--unknown";
}

std::vector<std::string> child_arguments(Command command) {
    return {std::string(command_name(command))};
}

void add_child_option(std::vector<std::string>& args, ChildFlag flag, std::string value) {
    args.push_back(child_flag(flag));
    args.push_back(std::move(value));
}

}  // namespace cumemctl::ipc
