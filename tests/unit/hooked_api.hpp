// A driver table that wraps another one: every entry point counts its calls and successes, and one
// chosen call (the nth call of an entry point) fails with a chosen result. For tests that every error
// path reports the failing call and releases what was made before it (creates == destroys).
#pragma once

#include <map>
#include <string>

#include "cuda/driver_api.hpp"

namespace testing_driver {

// What the hooked table counts and which call it fails. Not thread-safe: one test thread at a time.
struct Hooks {
    std::map<std::string, int> calls;      // entry point name -> calls
    std::map<std::string, int> successes;  // entry point name -> calls that returned CUDA_SUCCESS
    std::string fail_call;                 // the entry point to fail ("" for none)
    int fail_nth = 1;                      // which of its calls fails (1-based)
    CUresult fail_result = CUDA_ERROR_UNKNOWN;

    // Successes of the entry point `name` (0 when never called).
    int ok(const std::string& name) const {
        const auto it = successes.find(name);
        return it == successes.end() ? 0 : it->second;
    }
};

// The hooks of the table below; reset them between cases (hooks() = Hooks{}).
Hooks& hooks();

// `real` with every entry point that it has counted in hooks() and failed as hooks() says.
cumemctl::DriverApi hooked(const cumemctl::DriverApi& real);

}  // namespace testing_driver
