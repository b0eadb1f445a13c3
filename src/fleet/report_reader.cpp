#include "fleet/report_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <tuple>
#include <utility>
#include <variant>

#include <fmt/format.h>

#include "base/interrupt.hpp"
#include "fleet/report_decode.hpp"
#include "util/size.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::fleet {
namespace {

// The newlines in [from, to): memchr's pace, since a fleet's inputs are mostly long lines.
std::size_t newlines(const char* from, const char* to) {
    std::size_t n = 0;
    while (from < to) {
        const auto* nl = static_cast<const char*>(std::memchr(from, '\n', static_cast<std::size_t>(to - from)));
        if (nl == nullptr) break;
        ++n;
        from = nl + 1;
    }
    return n;
}

// What a file is, where it is not a regular file: "a FIFO", "a directory".
std::string kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

// The documents of one input, read a chunk at a time: the text of the document being read, and what
// came before it only as counts (its line numbers), so that memory holds one document, not the input.
class DocumentStream {
public:
    DocumentStream(int fd, std::string_view text, std::size_t source, FleetInputs& into, const ReadLimits& limits)
        : fd_(fd), buffer_(text), eof_(fd < 0), source_(source), into_(into), limits_(limits) {}

    void read_all();

private:
    bool fill();
    void problem(std::string message) { into_.problems.push_back({into_.sources[source_], std::move(message)}); }
    std::pair<std::size_t, std::size_t> lines_before(std::size_t at) const;
    std::string position(std::size_t at) const;
    void drop_read();
    bool resync(std::size_t from);
    void take(Decoded decoded, int index);

    int fd_;
    std::string buffer_;
    std::size_t start_ = 0;       // where the next document starts in buffer_
    std::size_t dropped_ = 0;     // bytes of the input before buffer_
    std::size_t lines_ = 0;       // newlines among them
    std::size_t line_start_ = 0;  // the input offset where the line of buffer_[0] starts
    bool eof_;
    std::size_t source_;
    FleetInputs& into_;
    const ReadLimits& limits_;
};

bool DocumentStream::fill() {
    if (eof_) return false;
    const std::size_t old = buffer_.size();
    buffer_.resize(old + limits_.chunk_bytes);
    ssize_t n = -1;
    do {
        check_interrupted();
        n = ::read(fd_, buffer_.data() + old, limits_.chunk_bytes);
    } while (n < 0 && errno == EINTR);
    if (n < 0) {
        const int err = errno;
        buffer_.resize(old);
        eof_ = true;
        problem(fmt::format("cannot read it: {}", std::strerror(err)));
        return false;
    }
    buffer_.resize(old + static_cast<std::size_t>(n));
    if (n == 0) eof_ = true;
    return n > 0;
}

// The lines before byte `at` of buffer_ (those already dropped counted), and the input offset where
// the line of `at` starts.
std::pair<std::size_t, std::size_t> DocumentStream::lines_before(std::size_t at) const {
    const std::size_t end = std::min(at, buffer_.size());
    const auto stop = buffer_.begin() + static_cast<std::ptrdiff_t>(end);
    const auto newline = std::find(std::make_reverse_iterator(stop), buffer_.rend(), '\n');
    const std::size_t line_start =
        newline == buffer_.rend() ? line_start_ : dropped_ + static_cast<std::size_t>(buffer_.rend() - newline);
    return {lines_ + newlines(buffer_.data(), buffer_.data() + end), line_start};
}

// "line 3, column 14" of the byte at `at` in buffer_, as an editor counts them.
std::string DocumentStream::position(std::size_t at) const {
    const auto [lines, line_start] = lines_before(at);
    return fmt::format("line {}, column {}", lines + 1, dropped_ + at - line_start + 1);
}

// Forgets the text before start_, keeping its line count.
void DocumentStream::drop_read() {
    if (start_ == 0) return;
    std::tie(lines_, line_start_) = lines_before(start_);
    dropped_ += start_;
    buffer_.erase(0, start_);
    start_ = 0;
}

// After text that is not JSON: goes on at the next line that starts a document ('{' first), reading
// on where it must; false where the input ends first or no document starts within the size limit.
bool DocumentStream::resync(std::size_t from) {
    std::size_t skipped = 0;
    while (true) {
        const std::size_t at = buffer_.find("\n{", from);
        if (at != std::string::npos) {
            start_ = at + 1;
            return true;
        }
        skipped += buffer_.size() - from;
        start_ = buffer_.empty() ? 0 : buffer_.size() - 1;  // a newline at the end may start the next line
        drop_read();
        if (skipped > limits_.max_document_bytes) {
            problem(fmt::format("no document starts within {} after that: the rest of it is not read",
                                format_size(limits_.max_document_bytes)));
            return false;
        }
        if (!fill()) return false;
        from = 0;
    }
}

void DocumentStream::take(Decoded decoded, int index) {
    if (auto* not_report = std::get_if<NotAReport>(&decoded)) {
        problem(fmt::format("document {}: {}", index, not_report->why));
        return;
    }
    ++into_.documents;
    if (auto* matrix = std::get_if<MatrixReport>(&decoded)) {
        matrix->source = source_;
        into_.matrices.push_back(std::move(*matrix));
        return;
    }
    auto& report = std::get<NodeReport>(decoded);
    report.source = source_;
    report.document = index;
    into_.reports.push_back(std::move(report));
}

void DocumentStream::read_all() {
    int index = 0;
    const std::size_t problems = into_.problems.size();
    while (true) {
        while (start_ < buffer_.size() && is_json_space(buffer_[start_])) ++start_;
        if (start_ == buffer_.size()) {
            if (!fill()) break;
            continue;
        }
        // At most one byte past the limit: a longer document ends the window inside itself.
        const std::string_view rest(buffer_.data() + start_,
                                    std::min(buffer_.size() - start_, limits_.max_document_bytes + 1));
        JsonCursor cursor(rest, limits_.max_depth);
        try {
            Decoded decoded = decode_document(cursor, limits_.max_depth);
            start_ += cursor.offset();
            take(std::move(decoded), ++index);
        } catch (const JsonIncomplete&) {
            if (rest.size() > limits_.max_document_bytes) {
                problem(fmt::format("document {} at {} is larger than the {} a report may have", index + 1,
                                    position(start_), format_size(limits_.max_document_bytes)));
                if (!resync(start_ + 1)) break;
                ++index;
                continue;
            }
            drop_read();
            if (fill()) continue;
            problem(fmt::format("not JSON at {}", position(buffer_.size())));  // it ends inside a document
            ++index;
            break;
        } catch (const JsonSyntaxError& e) {
            problem(fmt::format("not JSON at {}", position(start_ + e.offset)));
            ++index;
            if (!resync(start_ + e.offset)) break;
        }
        if (start_ > limits_.chunk_bytes) drop_read();
    }
    if (index == 0 && into_.problems.size() == problems) problem("it is empty: no report in it");
}

}  // namespace

bool is_host_name(std::string_view name) {
    if (name.empty() || name.size() > 255) return false;
    auto alnum = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'); };
    if (!alnum(name.front())) return false;
    return std::all_of(name.begin(), name.end(), [&](char c) { return alnum(c) || c == '.' || c == '-' || c == '_'; });
}

void read_input(const std::string& path, FleetInputs& into, const ReadLimits& limits) {
    const std::size_t source = into.sources.size();
    into.sources.push_back(path);
    auto refuse = [&](std::string message) { into.problems.push_back({path, std::move(message)}); };
    UniqueFd opened;
    int fd = STDIN_FILENO;
    if (path != "-") {
        opened = UniqueFd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
        if (!opened.valid()) return refuse(fmt::format("cannot read it: {}", std::strerror(errno)));
        fd = opened.get();
    }
    struct stat st {};
    if (::fstat(fd, &st) != 0) return refuse(fmt::format("cannot read it: {}", std::strerror(errno)));
    // Standard input may be a pipe (`srun ... | cumemctl fleet -`) or a terminal; a named file must be a
    // regular file: a FIFO would wait for a writer, a device (/dev/zero) never ends.
    const bool stream_ok = path == "-" && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || ::isatty(fd) == 1);
    if (!S_ISREG(st.st_mode) && !stream_ok)
        return refuse(fmt::format("it is {}, not a file of reports", kind_of(st.st_mode)));
    if (opened.valid()) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    DocumentStream(fd, {}, source, into, limits).read_all();
}

void read_text(std::string_view text, const std::string& source, FleetInputs& into, const ReadLimits& limits) {
    const std::size_t index = into.sources.size();
    into.sources.push_back(source);
    DocumentStream(-1, text, index, into, limits).read_all();
}

}  // namespace cumemctl::fleet
