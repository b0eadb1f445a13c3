// fleet's one reader of reports: every input is another node's text, careless or hostile until checked.
// It reads regular files (or standard input) in chunks, one JSON document (or one MUNGE credential
// holding documents, munge.hpp) at a time, each within a size
// and a nesting limit, into the typed reports of node_report.hpp; a document that is not a cumemctl
// report, or whose host is not a host name, is an input problem that names the file and the document.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/munge.hpp"
#include "fleet/node_report.hpp"

namespace cumemctl::fleet {

// An input that could not be used, or a document in it that is not a cumemctl report.
struct InputProblem {
    std::string source;  // the file name, or "-" for standard input
    std::string message;
};

// The limits of one read. A document past them is an input problem; reading goes on at the next line
// that starts a document.
struct ReadLimits {
    std::size_t max_document_bytes = std::size_t{64} << 20;
    int max_depth = 64;
    std::size_t chunk_bytes = std::size_t{4} << 20;  // what one read(2) asks for
    // MUNGE payloads: munged inflates a credential of a few KB into up to 1 MiB, and every decode is a
    // round trip to it. An input's payloads may hold this many bytes per byte of the input, and one
    // payload's worth more; after this many credentials that munged refuses, the rest of the input's
    // are not decoded. A credential inside a payload is never decoded.
    std::size_t payload_bytes_per_input_byte = 64;
    std::size_t payload_allowance = std::size_t{1} << 20;
    std::size_t max_refused_credentials = 20;
};

// The most problems listed of one input: the rest are counted, and the count is listed after them, so
// that an input of a million documents that are not reports costs a count, not a million messages.
inline constexpr std::size_t kProblemsListed = 20;

// What fleet read of all its inputs.
struct FleetInputs {
    std::vector<std::string> sources;      // the inputs' names, as given
    std::vector<NodeReport> reports;       // doctor and devices reports, in the order read (where no sink takes them)
    std::function<void(NodeReport)> sink;  // takes each doctor and devices report as it is read, if set
    // fabric-matrix reports: the ranks' folded into their runs as read (none kept), the sources of those
    // whose rank part is not of the schema's types, in order, and the reports of a whole matrix (--local,
    // --summary) as they are.
    matrix::RunInputs rank_runs;
    std::vector<std::size_t> unreadable_ranks;
    std::vector<MatrixReport> matrices;
    int rank_reports = 0;  // the ranks' reports folded into rank_runs
    // Whether a fabric-matrix report counts, by the host it speaks for and the credential it came in
    // (FleetFold::admits, which says why not); every one does where unset.
    std::function<bool(const std::string& host, const std::optional<MungeProof>& proof, std::size_t source,
                       int document)>
        admit;
    std::vector<InputProblem> problems;
    int documents = 0;                       // reports of the three kinds that were read
    std::vector<std::size_t> problem_count;  // per input: its problems, listed or not
    std::vector<std::size_t> left_out_said;  // per input: the problems left out that a line counts already
    const Munge* munge = nullptr;            // decodes MUNGE credentials; none: why not in munge_unavailable
    std::string munge_unavailable;
};

// Whether a problem of input `source` is listed if added now (fewer than kProblemsListed of it are):
// a caller words a problem only then.
bool lists_problem(const FleetInputs& in, std::size_t source);

// Counts a problem of input `source`, and adds it to `to` where it is listed.
void add_problem(FleetInputs& in, std::vector<InputProblem>& to, std::size_t source, std::string message);

// Adds to `to`, for each input whose problems were left out since the last such line, one that counts
// them: "and 1499980 more problems in it (the first 20 of an input are listed)".
void say_left_out(FleetInputs& in, std::vector<InputProblem>& to);
// The same for input `source` alone (after it is read: the others' counts did not change).
void say_left_out(FleetInputs& in, std::vector<InputProblem>& to, std::size_t source);

// Reads the input `path` ("-": standard input) and adds what it holds to `into`. Only a regular file
// is read (standard input may be a pipe too), and whether it is one is judged before it is opened
// (lstat, then an open that follows no link and does not block, then fstat): a FIFO, a device, a
// folder or a symbolic link is refused, named, and never opened for reading. A regular file is read
// as far as its size when it was opened: one that grows meanwhile ends there.
void read_input(const std::string& path, FleetInputs& into, const ReadLimits& limits = {});

// The same for text already in memory (tests, the fuzz target), named `source`.
void read_text(std::string_view text, const std::string& source, FleetInputs& into, const ReadLimits& limits = {});

}  // namespace cumemctl::fleet
