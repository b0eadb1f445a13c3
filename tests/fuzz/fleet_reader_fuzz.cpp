// libFuzzer target: fleet's report reader over arbitrary text, as another node could write it. It must
// never crash, hang or throw; every report it keeps names a host that is a host name; every problem
// names the input; and the text it would show a person holds no control character once printable.
#include <cstddef>
#include <cstdint>
#include <string>

#include "fleet/report_reader.hpp"
#include "fuzz_checks.hpp"
#include "util/hostlist.hpp"
#include "util/printable.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const std::string_view text(reinterpret_cast<const char*>(data), size);
    cumemctl::fleet::FleetInputs inputs;
    cumemctl::fleet::ReadLimits limits;
    limits.max_document_bytes = 4096;  // small, so that the limits are reached too
    limits.max_depth = 16;
    cumemctl::fleet::read_text(text, std::string(fuzz::kSource), inputs, limits);
    for (const auto& r : inputs.reports) {
        fuzz::require(cumemctl::is_single_host(r.host));
        fuzz::require(r.source == 0);
        for (const char c : cumemctl::printable(r.malformed + r.first_error + r.timestamp))
            fuzz::require(static_cast<unsigned char>(c) >= 0x20 && c != 0x7f);
    }
    for (const auto& p : inputs.problems) {
        fuzz::require(p.source == fuzz::kSource);
        fuzz::require(!p.message.empty());
    }
    fuzz::require(inputs.documents ==
                  static_cast<int>(inputs.reports.size() + inputs.matrices.size() + inputs.unreadable_ranks.size()) +
                      inputs.rank_reports);
    fuzz::require(inputs.documents > 0 || !inputs.problems.empty());
    return 0;
}
