// fleet's one reader of reports: every input is another node's text, careless or hostile until checked.
// It reads regular files (or standard input) in chunks, one JSON document at a time, each within a size
// and a nesting limit, into the typed reports of node_report.hpp; a document that is not a cumemctl
// report, or whose host is not a host name, is an input problem that names the file and the document.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

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
};

// What fleet read of all its inputs.
struct FleetInputs {
    std::vector<std::string> sources;  // the inputs' names, as given
    std::vector<NodeReport> reports;   // doctor and devices reports, in the order read
    std::vector<MatrixReport> matrices;
    std::vector<InputProblem> problems;
    int documents = 0;  // reports of the three kinds that were read
};

// Reads the input `path` ("-": standard input) and adds what it holds to `into`. Only a regular file
// is read (standard input may be a pipe too); it is opened without blocking, so that a FIFO or a device
// is refused, named, rather than waited on.
void read_input(const std::string& path, FleetInputs& into, const ReadLimits& limits = {});

// The same for text already in memory (tests, the fuzz target), named `source`.
void read_text(std::string_view text, const std::string& source, FleetInputs& into, const ReadLimits& limits = {});

// Whether `name` can be a node's host name: 1 to 255 letters, digits, '.', '-' and '_', starting with a
// letter or a digit. No Slurm host list ("gpu[001-512]"), comma, space or control character passes.
bool is_host_name(std::string_view name);

}  // namespace cumemctl::fleet
