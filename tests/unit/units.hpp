// Sizes the unit tests write often, defined once (the tests compile in unity batches).
#pragma once

#include <cstdint>

namespace testing_units {
inline constexpr std::uint64_t MiB = 1ULL << 20;
inline constexpr std::uint64_t GiB = 1ULL << 30;
}  // namespace testing_units
