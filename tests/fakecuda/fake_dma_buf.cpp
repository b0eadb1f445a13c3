// The fake driver's dma-buf export (cuMemGetHandleForAddressRange, CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD):
// the rules of the CUDA documentation (a device that says CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED, a range
// aligned to the host page, wholly cuMemAlloc memory or wholly mapped), and a real descriptor back: a
// memfd of the range's size, so that lseek and close behave as on a dma-buf.
//
// What the fake cannot make is the kernel's word on it: a memfd's /proc/self/fdinfo has no exp_name and
// its /proc/self/fd link says /memfd:. Where FAKECUDA_PROC_SELF names a folder (a test's system root,
// ROOT/proc/self, which cumemctl reads under CUMEMCTL_SYSROOT), the fake writes what the kernel would
// there: fdinfo/FD with size, count and exp_name (the profile device's dma_buf.exporter, default
// nv_dmabuf: drivers/dma-buf/dma-buf.c, dma_buf_show_fdinfo) and fd/FD linking to /dmabuf:. Without
// it, cumemctl reads the real /proc and finds no dma-buf: the fake never passes for the real thing.
//
// A profile device's dma_buf.export_error (a CUresult name) refuses every export: a driver that says
// dma-buf is supported and then refuses it.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "fake_context.hpp"
#include "fake_memory.hpp"

namespace fake {
namespace {

// The descriptors handed out, by number and inode, to tell at exit whether each was closed.
struct Exported {
    int fd = -1;
    ino_t inode = 0;
};

std::vector<Exported>& exported() {
    static auto* e = new std::vector<Exported>;
    return *e;
}

// Writes what the kernel says of a dma-buf descriptor under FAKECUDA_PROC_SELF, where it is set.
void write_proc_self(int fd, std::size_t size, const std::string& exporter) {
    const char* dir = std::getenv("FAKECUDA_PROC_SELF");
    if (dir == nullptr || *dir == '\0') return;
    const std::string base(dir);
    mkdir(base.c_str(), 0755);
    mkdir((base + "/fdinfo").c_str(), 0755);
    mkdir((base + "/fd").c_str(), 0755);
    const std::string info = base + "/fdinfo/" + std::to_string(fd);
    if (FILE* f = std::fopen(info.c_str(), "w")) {
        std::fprintf(f, "pos:\t0\nflags:\t02000002\nmnt_id:\t15\nino:\t%d\nsize:\t%zu\ncount:\t1\nexp_name:\t%s\n", fd,
                     size, exporter.c_str());
        std::fclose(f);
    }
    const std::string link = base + "/fd/" + std::to_string(fd);
    unlink(link.c_str());
    if (symlink("/dmabuf:", link.c_str()) != 0) std::perror("fakecuda: symlink");
}

}  // namespace

// What FAKECUDA_CHECK_LEAKS reports of dma-bufs: the descriptors still open at exit.
std::vector<std::string> dma_buf_leaks() {
    int open = 0;
    for (const auto& e : exported()) {
        struct stat st {};
        if (fstat(e.fd, &st) == 0 && st.st_ino == e.inode) ++open;
    }
    if (open == 0) return {};
    return {std::to_string(open) + " dma-buf descriptors not closed"};
}

}  // namespace fake

extern "C" {

CUresult cuMemGetHandleForAddressRange(void* handle, CUdeviceptr dptr, size_t size, CUmemRangeHandleType type,
                                       unsigned long long flags) {
    FAKE_ENTRY_INIT("cuMemGetHandleForAddressRange");
    if (handle == nullptr || size == 0 || type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || flags > 1) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    const int dev = fake::current_context_device();
    if (dev < 0) return CUDA_ERROR_INVALID_CONTEXT;
    if (!fake::has_attr(dev, CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED)) return CUDA_ERROR_NOT_SUPPORTED;
    const long page = sysconf(_SC_PAGESIZE);
    if (dptr % static_cast<unsigned long>(page) != 0 || size % static_cast<unsigned long>(page) != 0) {
        return CUDA_ERROR_INVALID_VALUE;
    }
    std::lock_guard<std::mutex> lock(fake::state().mutex);
    if (!fake::valid_device_range(dptr, size)) return CUDA_ERROR_INVALID_VALUE;
    const nlohmann::json& extra = fake::device(dev)->extra;
    const nlohmann::json dma = extra.contains("dma_buf") ? extra["dma_buf"] : nlohmann::json::object();
    if (dma.contains("export_error")) return fake::result_from_name(dma["export_error"].get<std::string>());
    const int fd = memfd_create("fakecuda-dmabuf", MFD_CLOEXEC);
    if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
        close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    struct stat st {};
    fstat(fd, &st);
    fake::exported().push_back({fd, st.st_ino});
    fake::write_proc_self(fd, size, dma.value("exporter", std::string("nv_dmabuf")));
    *static_cast<int*>(handle) = fd;
    return CUDA_SUCCESS;
}

}  // extern "C"
