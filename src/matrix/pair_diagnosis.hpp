// The diagnosis of one pair of a fabric-matrix run (an importer reading an exporter's memory): the
// cell for a pass with its read bandwidth, or for a failure with a name for the kind of failure, a
// cause and a remedy: no IMEX channel for this user ("imex-channel"), not one IMEX domain or no IMEX
// service ("imex-domain"), GPUs in different NVLink domains by their cards' cluster UUID and clique
// ("nvlink-domain"), a rank that never came ("missing"), a pattern mismatch ("mismatch"),
// different cumemctl or driver versions ("version"), a file in the folder that was refused
// ("invalid-file"), a rank that had no memory to offer ("rank-failed"), or a driver failure ("driver").
#pragma once

#include <optional>

#include "gpu/verify/verify.hpp"
#include "ipc/timeout.hpp"
#include "matrix/records.hpp"

namespace cumemctl::matrix {

// The failed cell of a pair that is not tried: the peer had no memory, its versions or handle type
// differ, or its size does not fit this rank's granularity; nullopt when the pair may be tried.
std::optional<Cell> refuse_pair(const Card& mine, const Card& peer, std::uint64_t granularity);

// The cell of a pair whose check ran: a pass with the read's bandwidth, or a mismatch.
Cell checked_cell(const Card& mine, const Card& peer, const gpu::VerifyResult& check);

// The cell of a pair whose import, map, access or check failed with `problem` (diagnosed by the
// diagnosis layer); `fabric` when the handle was a fabric handle.
Cell failed_cell(const Card& mine, const Card& peer, Problem problem, bool fabric);

// Every cell of a rank that had no memory of its own: its own problem.
Cell own_failure_cell(int peer, const Problem& problem);

// The cell of a peer whose file in the folder was refused (why: "its card is a symbolic link").
Cell refused_file_cell(int peer, const std::string& why);

// The cell of a peer that never came within `timeout`.
Cell missing_cell(int peer, ipc::Timeout timeout);

// The diagnosis name of a problem: "imex-channel" for CUDA_ERROR_NOT_PERMITTED, "no-support" for an
// unavailable feature, else "driver" for a driver failure and "failed" for anything else.
std::string diagnosis_of(const Problem& problem);

}  // namespace cumemctl::matrix
