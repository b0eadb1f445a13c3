// Times as every table writes them: one format across commands, three significant digits in the unit
// that fits (5.2 us, 0.41 ms, 12.3 ms, 1.02 s), so that a fast step and a slow check read alike.
#pragma once

#include <string>

namespace cumemctl {

// "5.2 us", "412 ms", "1.02 s", "1234 s"; "0 s" for zero or less.
std::string format_duration(double seconds);

}  // namespace cumemctl
