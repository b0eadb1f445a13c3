// bench_spawn: runs one command and reports its wall time and peak resident memory, for the benchmark
// runner (bench/measure.py). A small C-style program, so that neither figure carries the runner's
// own cost: the wall time is taken around fork and wait here, not around starting a Python child, and
// ru_maxrss of a child includes the high-water mark of the address space it was forked from (exec
// records it), which here is this program's ~1 MiB instead of the Python runner's.
//
//   bench_spawn REPORT_FILE COMMAND [ARGS...]
//
// Writes "EXIT_CODE WALL_SECONDS MAX_RSS_KIB" to REPORT_FILE (exit code 128+N for signal N) and exits
// with the command's exit code. The command inherits stdin, stdout and stderr.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>

namespace {

// Seconds on the monotonic clock.
double now() {
    timespec ts{};
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
    if (argc < 3) {
        std::fprintf(stderr, "usage: bench_spawn REPORT_FILE COMMAND [ARGS...]\n");
        return 2;
    }
    const double start = now();
    const pid_t pid = fork();
    if (pid < 0) {
        std::perror("bench_spawn: fork");
        return 127;
    }
    if (pid == 0) {
        execvp(argv[2], argv + 2);
        std::perror("bench_spawn: exec");
        _exit(127);
    }
    int status = 0;
    rusage usage{};
    if (wait4(pid, &status, 0, &usage) < 0) {
        std::perror("bench_spawn: wait4");
        return 127;
    }
    const double seconds = now() - start;
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    FILE* report = std::fopen(argv[1], "w");
    if (report == nullptr) {
        std::perror("bench_spawn: report file");
        return 127;
    }
    std::fprintf(report, "%d %.9f %ld\n", code, seconds, usage.ru_maxrss);
    std::fclose(report);
    return code;
}
