// A driver table for unit tests: one fake device whose answers come from captureless lambdas and a
// small static model, so the core is tested without dlopen.
#pragma once

#include <atomic>
#include <map>

#include "cuda/driver.hpp"

namespace testing_driver {

// A counter that threads may change together (the core reads free memory of several devices on one
// thread each) and that a test may still reset by assigning a new Model.
struct Counter {
    std::atomic<int> value{0};
    Counter() = default;
    Counter(const Counter& other) : value(other.value.load()) {}
    Counter& operator=(const Counter& other) {
        value = other.value.load();
        return *this;
    }
    operator int() const { return value.load(); }  // NOLINT(google-explicit-constructor)
    void operator++() { ++value; }
    void operator--() { --value; }
};

// The device model the lambdas read; tests change it before calling the core.
struct Model {
    int device_count = 1;
    std::map<int, int> attrs;  // absent attribute -> CUDA_ERROR_INVALID_VALUE
    size_t total = 80ULL << 30;
    size_t free = 70ULL << 30;
    CUresult retain_result = CUDA_SUCCESS;
    Counter retained;  // primary contexts retained and not yet released
};

// The model the table below reads.
Model& model();

// A table with the entry points the device queries use.
cumemctl::DriverApi table();

}  // namespace testing_driver
