#include "doctor/kernel_gpus.hpp"

#include <dirent.h>

#include <algorithm>
#include <cctype>
#include <sstream>

#include "util/text_file.hpp"

namespace cumemctl::doctor {
namespace {

bool uuid_shaped(const std::string& text) {
    return text.size() == 40 && text.rfind("GPU-", 0) == 0 && std::all_of(text.begin() + 4, text.end(), [](char c) {
               return c == '-' || std::isxdigit(static_cast<unsigned char>(c)) != 0;
           });
}

}  // namespace

std::optional<std::vector<KernelGpu>> kernel_gpus(const DoctorContext& ctx, std::size_t most) {
    const std::string root = ctx.path("/proc/driver/nvidia/gpus");
    DIR* dir = opendir(root.c_str());
    if (dir == nullptr) return std::nullopt;
    std::vector<KernelGpu> gpus;
    while (gpus.size() < most) {
        const dirent* e = readdir(dir);
        if (e == nullptr) break;
        const std::string name = e->d_name;
        if (name.empty() || name[0] == '.') continue;
        KernelGpu g{name, {}};
        std::string path = root;
        path.append("/").append(name).append("/information");
        std::istringstream info(try_read_text_file(path).value_or(""));
        std::string line;
        while (std::getline(info, line)) {
            if (line.rfind("GPU UUID:", 0) != 0) continue;
            std::istringstream rest(line.substr(9));
            std::string uuid;
            rest >> uuid;
            if (uuid_shaped(uuid)) g.uuid = uuid;
        }
        gpus.push_back(std::move(g));
    }
    closedir(dir);
    return gpus;
}

}  // namespace cumemctl::doctor
