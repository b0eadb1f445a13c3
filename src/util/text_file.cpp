#include "util/text_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "base/error.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl {

Error text_file_error(const std::string& path, const std::string& what, const std::string& remedy, int err) {
    const ExitCode code = err == EACCES || err == EPERM ? ExitCode::permission : ExitCode::unavailable;
    return Error(code, fmt::format("cannot read {} ({}): {}", path, what, std::strerror(err)), remedy);
}

std::string read_text_file(const std::string& path, const std::string& what, const std::string& remedy) {
    // Opened without waiting (a FIFO's open blocks until a writer comes, a terminal's read until a
    // line), then refused unless a regular file: /proc and /sys files are, and a system root's
    // stand-in that is a FIFO or a link to a terminal must not hang a health check.
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
    if (!fd.valid()) throw text_file_error(path, what, remedy, errno);
    struct stat st {};
    if (::fstat(fd.get(), &st) != 0) throw text_file_error(path, what, remedy, errno);
    if (!S_ISREG(st.st_mode)) {
        throw Error(ExitCode::unavailable, fmt::format("cannot read {} ({}): not a regular file", path, what), remedy);
    }
    return read_text_fd(fd.get(), path, what, remedy);
}

std::string read_text_fd(int fd, const std::string& path, const std::string& what, const std::string& remedy) {
    auto fail = [&](int err) { return text_file_error(path, what, remedy, err); };
    std::string text;
    char buffer[8192];
    for (;;) {
        const ssize_t n = ::read(fd, buffer, sizeof buffer);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) throw fail(errno);
        if (n == 0) break;
        text.append(buffer, static_cast<std::size_t>(n));
        if (text.size() > kMaxTextFileBytes) {
            throw Error(ExitCode::unavailable,
                        fmt::format("{} ({}) is larger than {} bytes: not the file it should be", path, what,
                                    kMaxTextFileBytes),
                        remedy);
        }
    }
    return text;
}

std::optional<std::string> try_read_text_file(const std::string& path) {
    try {
        return read_text_file(path, "", "");
    } catch (const Error&) {
        return std::nullopt;
    }
}

}  // namespace cumemctl
