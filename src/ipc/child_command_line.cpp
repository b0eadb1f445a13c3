#include "ipc/child_command_line.hpp"

#include <utility>

#include "base/enum_words.hpp"

namespace cumemctl::ipc {

namespace {

constexpr auto kChildFlags = enum_words<ChildFlag>({{ChildFlag::socket_fd, "--socket-fd"},
                                                    {ChildFlag::device, "--device"},
                                                    {ChildFlag::libcuda, "--libcuda"},
                                                    {ChildFlag::imex_channel_dir, "--imex-channel-dir"},
                                                    {ChildFlag::uid, "--uid"},
                                                    {ChildFlag::gid, "--gid"},
                                                    {ChildFlag::user, "--user"},
                                                    {ChildFlag::group, "--group"},
                                                    {ChildFlag::dir, "--dir"},
                                                    {ChildFlag::run, "--run"},
                                                    {ChildFlag::rank, "--rank"},
                                                    {ChildFlag::ranks, "--ranks"},
                                                    {ChildFlag::size, "--size"},
                                                    {ChildFlag::handle_type, "--handle-type"},
                                                    {ChildFlag::timeout_ms, "--timeout-ms"},
                                                    {ChildFlag::keep, "--keep"}},
                                                   "--unknown");

}  // namespace

std::string child_flag(ChildFlag flag) {
    return std::string(kChildFlags.word(flag));
}

std::vector<std::string> child_arguments(Command command) {
    return {std::string(command_name(command))};
}

void add_child_option(std::vector<std::string>& args, ChildFlag flag, std::string value) {
    args.push_back(child_flag(flag));
    args.push_back(std::move(value));
}

}  // namespace cumemctl::ipc
