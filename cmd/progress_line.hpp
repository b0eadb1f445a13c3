// The frame's progress line: what a long command (command_table: Does::works_long) does now, on
// standard error where it is a terminal and the output is the table, redrawn in place, once the work
// has run 2 s (shorter work shows nothing). run_command makes it; the command says what it does with
// progress_say (memtest its bar, bandwidth what it copies). The one progress display of every command.
#pragma once

#include <string>

namespace cumemctl::cmd {

// While it lives, the running command's progress line (one at a time).
class ProgressLine {
public:
    // `enabled` false: progress_say is a no-op. `command` begins the line ("bandwidth: ...").
    ProgressLine(bool enabled, std::string command);
    ~ProgressLine();  // erases the line
    ProgressLine(const ProgressLine&) = delete;
    ProgressLine& operator=(const ProgressLine&) = delete;

private:
    bool owner_ = false;  // this one draws
};

// Says what the running command does now ("GPU 0: host<->device, pinned"); nothing where no enabled
// ProgressLine lives.
void progress_say(std::string what);

}  // namespace cumemctl::cmd
