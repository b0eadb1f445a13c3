// The evidence of the multi-node NVLink checks: fabric, imex-channels and imex-domain (evidence.hpp).
#pragma once

#include <string>
#include <vector>

#include "base/verdict.hpp"
#include "doctor/evidence_fields.hpp"
#include "doctor/imex_survey.hpp"
#include "nvml/fabric_info.hpp"

namespace cumemctl::doctor {

// fabric: the GPU's place in the NVLink fabric as NVML describes it (NFD's labels read it), its UUID, and
// whether IMEX is set up.
struct FabricEvidence {
    nvml::FabricInfo fabric;
    std::string uuid;
    bool imex_configured = false;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v(kMerged, s.fabric);
        v("uuid", s.uuid, kReadByFleet);
        v("imex_configured", s.imex_configured);
    }
};

// imex-channels: the channel nodes and what decides them, the user they were judged for, and whether
// several people use the node.
struct ChannelsEvidence {
    ChannelSurvey survey;
    Maybe<std::string> user;
    Maybe<bool> multi_user;
    Maybe<std::string> multi_user_reason;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v(kMerged, s.survey);
        v("user", s.user);
        v("multi_user", s.multi_user);
        v("multi_user_reason", s.multi_user_reason);
    }
};

// What nvidia-imex-ctl answered (imex-domain): its exit code, whether it timed out, its first line (-q).
struct CtlEvidence {
    int exit_code = -1;
    bool timed_out = false;
    Maybe<std::string> output;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("exit_code", s.exit_code);
        v("timed_out", s.timed_out);
        v("output", s.output);
    }
};

// One node of the IMEX domain as nvidia-imex-ctl -N -j lists it.
struct ImexNodeEvidence {
    std::string node, host, status, version;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("node", s.node);
        v("host", s.host);
        v("status", s.status);
        v("version", s.version);
    }
};

// One finding of imex-domain: whether it fails or warns, and what.
struct ImexFinding {
    CheckStatus status = CheckStatus::warn;
    std::string finding;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("status", s.status);
        v("finding", s.finding);
    }
};

// imex-domain: the GPUs attached to a fabric, the unit, the files, the daemon and the command service's
// answers, the domain and its nodes, and the findings; each only where the check got that far.
struct ImexDomainEvidence {
    int attached_gpus = 0;
    std::string unit;
    Maybe<std::string> managed_externally, config, nodes_file;
    Maybe<std::vector<std::string>> nodes;
    Maybe<bool> running;
    Maybe<std::string> imex_ctl;
    Maybe<CtlEvidence> query, domain_query;
    Maybe<std::string> domain;
    Maybe<std::vector<ImexNodeEvidence>> domain_nodes;
    Maybe<bool> command_service;
    Maybe<std::vector<ImexFinding>> findings;
    template <class Self, class Visit>
    static void fields(Self& s, Visit&& v) {
        v("attached_gpus", s.attached_gpus);
        v("unit", s.unit);
        v("managed_externally", s.managed_externally);
        v("config", s.config);
        v("nodes_file", s.nodes_file);
        v("nodes", s.nodes);
        v("running", s.running);
        v("imex_ctl", s.imex_ctl);
        v("query", s.query);
        v("domain_query", s.domain_query);
        v("domain", s.domain);
        v("domain_nodes", s.domain_nodes);
        v("command_service", s.command_service);
        v("findings", s.findings);
    }
};

}  // namespace cumemctl::doctor
