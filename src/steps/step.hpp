// The one step model: what an operation did, one driver call (or one small piece of work) at a time,
// with the driver's answer, how long it took, what came of it, and whether it undid an earlier step.
// Every operation with steps (create, create --pool and its IPC check, le-bind, the fabric probe,
// imex-setup --verify, doctor) records them as Step, and a second process sends its own back.
#pragma once

#include <optional>
#include <string>

namespace cumemctl::steps {

// One step as a report shows it.
struct Step {
    std::string name;           // "create", "unbind on device 1", "import pool"
    std::string call;           // the entry point ("cuMemCreate") or the work ("fill_and_check"); may be empty
    std::optional<int> result;  // the CUresult, where the step is one driver call that was made
    std::string result_name;    // "CUDA_SUCCESS", "CUDA_ERROR_INVALID_VALUE", "deadline"; empty when unknown
    bool ok = true;             // false for a failed call, a failed check or a wait that ran out of time
    double seconds = 0;         // how long it took
    std::string detail;         // what came back or what was asked: "id 1", "2 MiB on device 0"
    bool undo = false;          // a step that undoes an earlier one
    std::string process;        // "" for this process; "importer" (and the like) for a second process's step
};

}  // namespace cumemctl::steps
