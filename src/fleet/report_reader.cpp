#include "fleet/report_reader.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <tuple>
#include <utility>
#include <variant>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "base/interrupt.hpp"
#include "fleet/report_decode.hpp"
#include "util/host.hpp"
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

// What a report held past the caps of node_report.hpp: "document 3: the report of gpu005 lists more
// than 256 checks that did not pass: the first 256 are kept (its status counts them all)".
std::string capped_words(const NodeReport& r, int index) {
    std::vector<std::string> parts;
    if ((r.capped & kCapChecks) != 0)
        parts.push_back(
            fmt::format("more than {} checks that did not pass (the first {} are kept; its status counts "
                        "them all)",
                        kMaxChecksKept, kMaxChecksKept));
    if ((r.capped & kCapGpus) != 0)
        parts.push_back(fmt::format("more than {} GPUs (the first {} are kept)", kMaxGpus, kMaxGpus));
    if ((r.capped & kCapCapabilities) != 0)
        parts.push_back(
            fmt::format("more than {} capabilities (the first {} are kept)", kMaxCapabilities, kMaxCapabilities));
    if ((r.capped & kCapBandwidth) != 0)
        parts.push_back(
            fmt::format("more than {} bandwidth figures (the first {} are kept)", 3 * kMaxGpus, 3 * kMaxGpus));
    return fmt::format("document {}: the report of {} holds {}", index, r.host, fmt::join(parts, "; "));
}

// The bytes of a document scanned by value before it is decoded (scan_json_value): a document that is
// not JSON within them costs no exception; a fault past them costs one per this much text at least.
constexpr std::size_t kScanBytes = 4096;

// What an input (its own text, and the payloads of its credentials) has spent of its budget.
struct InputBudget {
    std::size_t read = 0;     // bytes of the input itself
    std::size_t payload = 0;  // bytes of its credentials' payloads
    std::size_t refused = 0;  // credentials that munged refused
    bool said = false;        // whether the budget's end was named
};

constexpr std::size_t kNoEnd = static_cast<std::size_t>(-1);

// A regular file's size now: where its reading ends, whatever is appended (or holed) meanwhile.
std::size_t size_of(int fd) {
    struct stat st {};
    return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? static_cast<std::size_t>(st.st_size) : kNoEnd;
}

// The documents of one input, read a chunk at a time: the text of the document being read, and what
// came before it only as counts (its line numbers), so that memory holds one document, not the input.
class DocumentStream {
public:
    // `fd` read to its end, at most `size` bytes (a regular file's when opened), or `text` (fd -1);
    // `budget`: the input's, shared with the streams of its payloads (none: this stream's own).
    DocumentStream(int fd, std::string_view text, std::size_t source, FleetInputs& into, const ReadLimits& limits,
                   std::size_t size = kNoEnd, InputBudget* budget = nullptr)
        : fd_(fd),
          buffer_(text),
          eof_(fd < 0),
          left_(size),
          source_(source),
          into_(into),
          limits_(limits),
          budget_(budget != nullptr ? budget : &own_budget_) {
        if (fd < 0 && budget == nullptr) budget_->read = text.size();
    }

    void read_all();

private:
    bool fill(std::size_t at_least = 0);
    // A problem of this input, worded by `words` only where it is listed (kProblemsListed).
    template <class F>
    void problem(F words) {
        if (lists_problem(into_, source_)) {
            add_problem(into_, into_.problems, source_, words());
        } else {
            ++into_.problem_count[source_];
        }
    }
    std::pair<std::size_t, std::size_t> lines_before(std::size_t at) const;
    std::string position(std::size_t at) const;
    void drop_read();
    bool resync(std::size_t from);
    void take(Decoded decoded, int index);
    bool credential(int& index);
    bool not_json(std::size_t offset, int& index);

public:
    std::optional<MungeProof> proof_;  // of the credential whose payload this stream reads

private:
    int fd_;
    std::string buffer_;
    std::size_t start_ = 0;       // where the next document starts in buffer_
    std::size_t dropped_ = 0;     // bytes of the input before buffer_
    std::size_t lines_ = 0;       // newlines among them
    std::size_t line_start_ = 0;  // the input offset where the line of buffer_[0] starts
    bool eof_;
    std::size_t left_;  // bytes of the file still to read
    std::size_t source_;
    FleetInputs& into_;
    const ReadLimits& limits_;
    InputBudget own_budget_;
    InputBudget* budget_;
};

// Reads at least `at_least` bytes more (a chunk where that is less), or to the end of the input;
// false where nothing more came. A document that does not fit asks for as much again as it has, so
// that it is parsed from its start a few times (log of its size), never once per chunk.
bool DocumentStream::fill(std::size_t at_least) {
    const std::size_t want = std::max(at_least, limits_.chunk_bytes);
    const std::size_t old = buffer_.size();
    while (!eof_ && buffer_.size() - old < want) {
        if (left_ == 0) {
            eof_ = true;
            break;
        }
        const std::size_t at = buffer_.size();
        const std::size_t ask = std::min({limits_.chunk_bytes, old + want - at, left_});
        buffer_.resize(at + ask);
        ssize_t n = -1;
        do {
            check_interrupted();
            n = ::read(fd_, buffer_.data() + at, ask);
        } while (n < 0 && errno == EINTR);
        if (n < 0) {
            const int err = errno;
            buffer_.resize(at);
            eof_ = true;
            problem([&] { return fmt::format("cannot read it: {}", std::strerror(err)); });
            break;
        }
        buffer_.resize(at + static_cast<std::size_t>(n));
        if (left_ != kNoEnd) left_ -= static_cast<std::size_t>(n);
        budget_->read += static_cast<std::size_t>(n);
        if (n == 0) eof_ = true;
    }
    return buffer_.size() > old;
}

// A MUNGE credential at start_ ("MUNGE:" base64 ":"): decoded by munged, its payload read as documents
// whose author and time are the credential's; one that munged refuses is an input problem. False where
// the input ends inside it.
bool DocumentStream::credential(int& index) {
    std::size_t end = std::string::npos;
    while (true) {
        end = buffer_.find(':', start_ + kMungePrefix.size());
        if (end != std::string::npos || buffer_.size() - start_ > limits_.max_document_bytes) break;
        drop_read();
        if (!fill(buffer_.size())) {
            if (buffer_.size() - start_ < kMungePrefix.size()) break;  // not even its prefix: read as JSON
            problem(
                [&] { return fmt::format("document {}: a MUNGE credential that the input ends inside", index + 1); });
            return false;
        }
    }
    if (end == std::string::npos) {
        if (buffer_.size() - start_ < kMungePrefix.size()) return false;
        problem([&] {
            return fmt::format("document {}: a MUNGE credential larger than {}", index + 1,
                               format_size(limits_.max_document_bytes));
        });
        return resync(start_ + 1);
    }
    const std::string_view text(buffer_.data() + start_, end + 1 - start_);
    ++index;
    start_ = end + 1;
    if (proof_) {
        problem([&] { return fmt::format("document {}: a MUNGE credential inside a credential: not decoded", index); });
        return true;
    }
    if (into_.munge == nullptr) {
        problem([&] {
            return fmt::format("document {}: a MUNGE credential, not read: {}", index, into_.munge_unavailable);
        });
        return true;
    }
    InputBudget& b = *budget_;
    const std::size_t allowed = b.read * limits_.payload_bytes_per_input_byte + limits_.payload_allowance;
    if (b.refused >= limits_.max_refused_credentials || b.payload >= allowed) {
        if (b.said) {
            ++into_.problem_count[source_];
            return true;
        }
        // Listed past kProblemsListed too: once per input, it says why the rest was not read.
        b.said = true;
        std::string why = b.payload >= allowed
                              ? fmt::format(
                                    "document {}: its credentials' payloads came to {}, {} times the input's "
                                    "size and more: the rest of its credentials are not decoded",
                                    index, format_size(b.payload), limits_.payload_bytes_per_input_byte)
                              : fmt::format(
                                    "document {}: munged refused {} of its credentials: the rest are not "
                                    "decoded",
                                    index, b.refused);
        into_.problems.push_back({into_.sources.at(source_), std::move(why)});
        return true;
    }
    MungeDecoded d = into_.munge->decode(text);
    if (!d.proof) {
        ++b.refused;
        problem(
            [&] { return fmt::format("document {}: a MUNGE credential that munged refuses: {}", index, d.message); });
        if (d.error == MungeError::socket || d.error == MungeError::timeout) {
            // munged does not answer: every other credential would wait as long.
            into_.munge_unavailable = fmt::format("munged did not answer ({})", d.message);
            into_.munge = nullptr;
        }
        return true;
    }
    b.payload += d.payload.size();
    DocumentStream payload(-1, d.payload, source_, into_, limits_, kNoEnd, budget_);
    payload.proof_ = d.proof;
    payload.read_all();
    return true;
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
            problem([&] {
                return fmt::format("no document starts within {} after that: the rest of it is not read",
                                   format_size(limits_.max_document_bytes));
            });
            return false;
        }
        if (!fill()) return false;
        from = 0;
    }
}

void DocumentStream::take(Decoded decoded, int index) {
    if (auto* not_report = std::get_if<NotAReport>(&decoded)) {
        problem([&] { return fmt::format("document {}: {}", index, not_report->why); });
        return;
    }
    ++into_.documents;
    if (auto* matrix = std::get_if<MatrixReport>(&decoded)) {
        const auto* rank = matrix->results ? std::get_if<matrix::MatrixResults::Rank>(&matrix->results->mode) : nullptr;
        // A rank speaks for the host its card names (the matrix shows it), a whole matrix for its report's.
        if (matrix->results && into_.admit &&
            !into_.admit(rank != nullptr && rank->card ? rank->card->host : matrix->host, proof_, source_, index))
            return;
        if (!matrix->refused.empty()) problem([&] { return fmt::format("document {}: {}", index, matrix->refused); });
        if (matrix->unreadable == matrix::UnreadablePart::rank) {
            into_.unreadable_ranks.push_back(source_);
        } else if (rank != nullptr) {
            for (const std::string& words : into_.rank_runs.add(*rank, source_, into_.sources))
                problem([&] { return fmt::format("document {}: {}", index, words); });
            ++into_.rank_reports;
        } else {
            matrix->source = source_;
            into_.matrices.push_back(std::move(*matrix));
        }
        return;
    }
    auto& report = std::get<NodeReport>(decoded);
    report.source = source_;
    report.document = index;
    if (proof_) {
        // Its author and its time are the credential's, not what its text says.
        report.proof = proof_;
        report.when = std::chrono::system_clock::from_time_t(proof_->encoded);
        report.timestamp = utc_timestamp(*report.when);
    }
    if (report.capped != 0) problem([&] { return capped_words(report, index); });
    if (into_.sink) {
        into_.sink(std::move(report));
    } else {
        into_.reports.push_back(std::move(report));
    }
}

// Text that is not JSON at `offset` from start_: named, then reading goes on at the next line that
// starts a document; false where none does.
bool DocumentStream::not_json(std::size_t offset, int& index) {
    problem([&] { return fmt::format("not JSON at {}", position(start_ + offset)); });
    ++index;
    return resync(start_ + offset);
}

void DocumentStream::read_all() {
    int index = 0;
    const std::size_t problems = into_.problem_count[source_];
    while (true) {
        check_interrupted();  // a payload is read without a read(2) to check at
        while (start_ < buffer_.size() && is_json_space(buffer_[start_])) ++start_;
        if (start_ == buffer_.size()) {
            if (!fill()) break;
            continue;
        }
        if (buffer_.compare(start_, kMungePrefix.size(), kMungePrefix) == 0 ||
            (buffer_.size() - start_ < kMungePrefix.size() &&
             kMungePrefix.substr(0, buffer_.size() - start_) == std::string_view(buffer_).substr(start_))) {
            if (!credential(index)) break;
            continue;
        }
        // At most one byte past the limit: a longer document ends the window inside itself.
        const std::string_view rest(buffer_.data() + start_,
                                    std::min(buffer_.size() - start_, limits_.max_document_bytes + 1));
        // Its first bytes scanned by value: a document that is not JSON there costs no exception.
        const JsonScan scan = scan_json_value(rest.substr(0, kScanBytes), limits_.max_depth);
        if (scan.result == JsonScan::Result::syntax) {
            if (!not_json(scan.offset, index)) break;
            if (start_ > limits_.chunk_bytes) drop_read();
            continue;
        }
        JsonCursor cursor(rest, limits_.max_depth);
        try {
            Decoded decoded = decode_document(cursor, limits_.max_depth);
            start_ += cursor.offset();
            take(std::move(decoded), ++index);
        } catch (const JsonIncomplete&) {
            if (rest.size() > limits_.max_document_bytes) {
                problem([&] {
                    return fmt::format("document {} at {} is larger than the {} a report may have", index + 1,
                                       position(start_), format_size(limits_.max_document_bytes));
                });
                if (!resync(start_ + 1)) break;
                ++index;
                continue;
            }
            drop_read();
            if (fill(buffer_.size())) continue;  // as much again: parsed from its start log(size) times
            problem(
                [&] { return fmt::format("not JSON at {}", position(buffer_.size())); });  // it ends inside a document
            ++index;
            break;
        } catch (const JsonSyntaxError& e) {
            if (!not_json(e.offset, index)) break;
        }
        if (start_ > limits_.chunk_bytes) drop_read();
    }
    if (index == 0 && into_.problem_count[source_] == problems)
        problem([&] { return std::string("it is empty: no report in it"); });
}

// Opens the named input for reading only where it is a regular file, judged before it is opened: a
// FIFO would wait for a writer, a device (/dev/zero, a tape) does something when opened, a link could
// point at either. lstat first, then open without following a link and without blocking, then fstat:
// the file opened must be the regular file that lstat saw. An empty descriptor and the refusal otherwise.
std::pair<UniqueFd, std::string> open_regular(const std::string& path) {
    struct stat seen {};
    if (::lstat(path.c_str(), &seen) != 0) return {UniqueFd(), fmt::format("cannot read it: {}", std::strerror(errno))};
    if (S_ISLNK(seen.st_mode)) {
        struct stat target {};
        const std::string what = ::stat(path.c_str(), &target) == 0 ? kind_of(target.st_mode) : "nothing that exists";
        return {UniqueFd(), fmt::format("it is a symbolic link (to {}), not a file of reports: give the file itself",
                                        S_ISREG(target.st_mode) ? "a regular file" : what)};
    }
    if (!S_ISREG(seen.st_mode))
        return {UniqueFd(), fmt::format("it is {}, not a file of reports", kind_of(seen.st_mode))};
    UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
    if (!fd.valid()) return {UniqueFd(), fmt::format("cannot read it: {}", std::strerror(errno))};
    struct stat opened {};
    if (::fstat(fd.get(), &opened) != 0) return {UniqueFd(), fmt::format("cannot read it: {}", std::strerror(errno))};
    if (!S_ISREG(opened.st_mode) || opened.st_dev != seen.st_dev || opened.st_ino != seen.st_ino)
        return {UniqueFd(), "it was replaced while it was opened: not read"};
    ::fcntl(fd.get(), F_SETFL, ::fcntl(fd.get(), F_GETFL) & ~O_NONBLOCK);
    return {std::move(fd), std::string()};
}

}  // namespace

bool lists_problem(const FleetInputs& in, std::size_t source) {
    return source >= in.problem_count.size() || in.problem_count[source] < kProblemsListed;
}

void add_problem(FleetInputs& in, std::vector<InputProblem>& to, std::size_t source, std::string message) {
    if (in.problem_count.size() <= source) in.problem_count.resize(source + 1);
    if (in.problem_count[source]++ < kProblemsListed) to.push_back({in.sources.at(source), std::move(message)});
}

void say_left_out(FleetInputs& in, std::vector<InputProblem>& to, std::size_t source) {
    in.left_out_said.resize(in.problem_count.size());
    if (source >= in.problem_count.size()) return;
    const std::size_t left_out =
        in.problem_count[source] > kProblemsListed ? in.problem_count[source] - kProblemsListed : 0;
    if (left_out <= in.left_out_said[source]) return;
    to.push_back({in.sources[source], fmt::format("and {} more problems in it (the first {} of an input are listed)",
                                                  left_out - in.left_out_said[source], kProblemsListed)});
    in.left_out_said[source] = left_out;
}

void say_left_out(FleetInputs& in, std::vector<InputProblem>& to) {
    for (std::size_t source = 0; source < in.problem_count.size(); ++source) say_left_out(in, to, source);
}

void read_input(const std::string& path, FleetInputs& into, const ReadLimits& limits) {
    const std::size_t source = into.sources.size();
    into.sources.push_back(path);
    into.problem_count.resize(into.sources.size());
    auto refuse = [&](std::string message) { add_problem(into, into.problems, source, std::move(message)); };
    if (path != "-") {
        auto [fd, why] = open_regular(path);
        if (!fd.valid()) return refuse(std::move(why));
        DocumentStream(fd.get(), {}, source, into, limits, size_of(fd.get())).read_all();
        return say_left_out(into, into.problems, source);
    }
    struct stat st {};
    if (::fstat(STDIN_FILENO, &st) != 0) return refuse(fmt::format("cannot read it: {}", std::strerror(errno)));
    // Standard input, already open, may be a pipe (`srun ... | cumemctl fleet -`) or a terminal as well as
    // a regular file; a device (< /dev/zero) never ends.
    const bool stream_ok = S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || ::isatty(STDIN_FILENO) == 1;
    if (!S_ISREG(st.st_mode) && !stream_ok)
        return refuse(fmt::format("it is {}, not a file of reports", kind_of(st.st_mode)));
    DocumentStream(STDIN_FILENO, {}, source, into, limits, S_ISREG(st.st_mode) ? size_of(STDIN_FILENO) : kNoEnd)
        .read_all();
    say_left_out(into, into.problems, source);
}

void read_text(std::string_view text, const std::string& source, FleetInputs& into, const ReadLimits& limits) {
    const std::size_t index = into.sources.size();
    into.sources.push_back(source);
    into.problem_count.resize(into.sources.size());
    DocumentStream(-1, text, index, into, limits).read_all();
    say_left_out(into, into.problems, index);
}

}  // namespace cumemctl::fleet
