// How imex-setup's core names the properties of a request in what it tells people, with the
// placeholders of base/property_words. The core never spells a command's option: a message, cause,
// remedy or channel detail names a property with its placeholder ("point {params} at ...") and is
// filled with the core's words ("point the params path at ...") or, by imex-setup, with its options
// (cmd/imex_setup.cpp: "point --params at ...").
#pragma once

#include <string>
#include <string_view>

#include "base/error.hpp"
#include "base/property_words.hpp"

namespace cumemctl::imex {

// The properties of an imex-setup request that a text may name. The placeholder of each is its name
// in braces: {proc_devices}, {params}, {dev_root}, {owner}, {mode}, {force}, {check}, {dry_run}.
enum class ImexProperty {
    proc_devices,  // the file read as /proc/devices
    params,        // the file read as the driver's params file
    dev_root,      // the folder that holds dev/
    owner,         // the user and group given the channels
    mode,          // the mode given the channels
    force,         // replacing (or removing) device nodes of the wrong type or number
    check,         // changing nothing, failing where anything differs
    dry_run,       // changing nothing, saying what would change
};

// Names a property for the person who reads a text.
using ImexNames = std::string (*)(ImexProperty);

// The core's words for a property: "the devices path", "the params path", "the device root", "the
// channels' owner", "the channels' mode", "a forced run", "a check-only run", "a dry run".
std::string imex_property_words(ImexProperty property);

// The placeholder of a property: "{params}".
std::string imex_placeholder(ImexProperty property);

// `text` with each property placeholder replaced by names(property); other text, braces included, is
// kept as it is.
std::string imex_words(std::string_view text, ImexNames names = imex_property_words);

// The problem with its message, cause and remedy filled by imex_words.
Problem imex_words(Problem problem, ImexNames names = imex_property_words);

// An error of imex-setup's core whose texts (message, cause, remedy) may hold property placeholders
// (base/property_words: PropertyError).
class ImexError : public PropertyError<ImexProperty> {
public:
    explicit ImexError(Problem problem);
};

}  // namespace cumemctl::imex
