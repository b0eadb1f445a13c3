// The output formats that only doctor writes, beside the report's own renderers (report/renderer.hpp):
// node-feature-discovery labels and JUnit XML, both judging each check by its typed status.
#pragma once

#include <ostream>
#include <string_view>

#include "report/renderer.hpp"

namespace cumemctl::doctor {

// The prefix of doctor's node-feature-discovery labels: a sub-namespace of NFD's own, which nfd-master
// accepts without -extra-label-ns.
inline constexpr std::string_view kNfdLabelPrefix = "cumemctl.feature.node.kubernetes.io/";

// doctor's report as a node-feature-discovery feature file (features.d): a comment naming the run, the
// expiry directive where Report::expires is set, then PREFIX/name=value lines (valid label values only)
// of what the checks found: doctor's status, the GPU count, VMM, pools and their handle types, fabric
// handles, the compute capability, memory health, a usable IMEX channel, the fabric clique.
class NfdRenderer final : public Renderer {
public:
    void render(const Report& report, std::ostream& out) const override;
};

// doctor's report as JUnit XML: one test case per check and device; fail and timeout as failures with
// the reason and the remedy, skip and busy as skipped (busy naming the processes), an error that no
// check reports (no driver) and a status that is none of doctor's as error cases.
class JunitRenderer final : public Renderer {
public:
    void render(const Report& report, std::ostream& out) const override;
};

}  // namespace cumemctl::doctor
