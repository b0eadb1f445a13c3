// How imex-setup's core names the properties of a request in what it tells people. The core never
// spells a command's option: each message, cause, remedy and channel detail is formatted, where it is
// made, with the names of the request (ImexSetupRequest::names): the core's own words by default
// ("point the params path at ..."), imex-setup's options where it sets them ("point --params at ...").
#pragma once

#include <string>

namespace cumemctl::imex {

// What each property of an imex-setup request is called for the person who reads a text: by default
// the core's words (what doctor, or any caller without options, shows); imex-setup sets its options.
struct ImexNames {
    std::string proc_devices = "the devices path";  // the file read as /proc/devices
    std::string params = "the params path";         // the file read as the driver's params file
    std::string dev_root = "the device root";       // the folder that holds dev/
    std::string owner = "the channels' owner";      // the user and group given the channels
    std::string mode = "the channels' mode";        // the mode given the channels
    std::string force = "a forced run";             // replacing (or removing) device nodes of the wrong type or number
    std::string check = "a check-only run";         // changing nothing, failing where anything differs
    std::string dry_run = "a dry run";              // changing nothing, saying what would change
};

}  // namespace cumemctl::imex
