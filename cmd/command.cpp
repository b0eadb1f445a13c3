#include "command.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <exception>

#include <fmt/format.h>

#include "base/interrupt.hpp"
#include "command_table.hpp"
#include "ipc/process.hpp"
#include "report/json_fields.hpp"
#include "shared_gpu.hpp"
#include "util/unique_fd.hpp"

namespace cumemctl::cmd {

Driver open_driver(const Globals& globals) {
    return Driver::load(choose_libcuda(globals.libcuda));
}

nvml::Library open_nvml(const Globals& globals, bool watched) {
    return nvml::Library::load(nvml::choose_libnvml(globals.libnvml), watched);
}

void warn_unloaded_libnvml(Report& report, const Globals& globals, const nvml::LibraryInfo& info) {
    if (globals.libnvml.empty() || info.loaded) return;
    report.add_warning(
        fmt::format("--libnvml {} did not load: {}; NVML's figures are left out", globals.libnvml, info.error),
        "give the path of libnvidia-ml.so.1, or leave --libnvml out");
}

nlohmann::json nvml_json(const nvml::LibraryInfo& info) {
    nlohmann::json j{
        {"library", info.library}, {"loaded", info.loaded}, {"driver_version", text_or_null(info.driver_version)}};
    if (!info.error.empty()) j["error"] = info.error;
    return j;
}

Problem interrupted_problem(const Interrupted& stop) {
    return Problem{.exit_code = stop.exit_code(),
                   .message = fmt::format("{}: the run stopped; what it had made was released", stop.what()),
                   .remedy = "run the command again to finish it"};
}

Report run_guarded(const std::string& command, const std::function<void(Report&)>& body) {
    Report report;
    report.command = command;
    try {
        body(report);
    } catch (const Error& e) {
        report.add_error(e.problem());
    } catch (const Interrupted& e) {
        report.add_error(interrupted_problem(e));
        report.exit_code = e.exit_code();  // the stop decides the exit code, whatever came before
    } catch (const std::exception& e) {
        report.add_error(internal_error(e.what()));
    }
    report_stopped_watches(report);  // a stopped run still names who shared the GPU while it measured
    return report;
}

std::optional<Report> stopped_report(const Report& report) {
    const int signal = interrupt_signal();
    if (signal == 0) return std::nullopt;
    const Interrupted stop(signal);
    if (report.exit_code == stop.exit_code()) return std::nullopt;
    Report stopped = report;
    stopped.add_error(interrupted_problem(stop));
    stopped.exit_code = stop.exit_code();
    return stopped;
}

Report run_second_process(const std::string& command, int socket_fd,
                          const std::function<std::optional<Problem>(int socket)>& serve) {
    const UniqueFd socket(socket_fd);
    ipc::die_with_parent();
    return run_guarded(command, [&](Report& report) {
        const std::optional<Problem> problem = serve(socket.get());
        if (problem) report.exit_code = problem->exit_code == ExitCode::ok ? ExitCode::failed : problem->exit_code;
    });
}

bool shows_progress(const Globals& globals) {
    return running_does(Does::works_long) && globals.output == OutputFormat::table && isatty(STDERR_FILENO) == 1;
}

std::size_t output_width() {
    if (const char* columns = std::getenv("COLUMNS"); columns != nullptr && *columns != '\0') {
        char* end = nullptr;
        const long n = std::strtol(columns, &end, 10);
        if (*end == '\0' && n >= 40 && n <= 10000) return static_cast<std::size_t>(n);
    }
    winsize ws{};
    if (isatty(STDOUT_FILENO) == 0) return 0;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
    return 80;
}

CLI::Option* add_device_option(CLI::App& app, std::string& target, const std::string& default_value) {
    target = default_value;
    return app
        .add_option("-d,--device", target,
                    "devices: CUDA ordinals (0, 0,2, 0-3), UUIDs (GPU-...), PCI bus ids (00000000:3B:00.0), nvidiaN "
                    "(nvidia-smi's index N) or all; a number is a CUDA ordinal, nvidia-smi's index only under "
                    "CUDA_DEVICE_ORDER=PCI_BUS_ID")
        ->capture_default_str();
}

}  // namespace cumemctl::cmd
