// The kernel log's Xid lines (doctor/xid_log) and the dma-buf verdict (gpu/vmm/dma_buf): the parsing
// and judging that the end-to-end cases reach only through files.
#include <doctest/doctest.h>

#include "doctor/xid_log.hpp"
#include "gpu/vmm/dma_buf.hpp"

using namespace cumemctl;
using namespace cumemctl::doctor;

TEST_CASE("an Xid record of /dev/kmsg gives its GPU, number, time and text") {
    const XidLog log = parse_kernel_log(
        "6,0,0,-;Linux version 6.8.0\n"
        " SUBSYSTEM=cpu\n"
        "4,7,12500000,-;NVRM: Xid (PCI:0000:10:1c): 63, pid=1896, Row Remapper: New row marked for remapping, "
        "reset gpu to activate.\n"
        "4,8,13000000,-,caller=T12;NVRM: Xid (0000:2b:00): 79, GPU has fallen off the bus.\n"
        "6,9,14000000,-;NVRM: loading NVIDIA UNIX Open Kernel Module\n");
    CHECK(log.records == 4);
    CHECK(log.from_boot);
    REQUIRE(log.events.size() == 2);
    CHECK(log.events[0].pci_bus_id == "00000000:10:1C.0");
    CHECK(log.events[0].xid == 63);
    CHECK(log.events[0].since_boot == doctest::Approx(12.5));
    CHECK(log.events[0].text == "pid=1896, Row Remapper: New row marked for remapping, reset gpu to activate.");
    CHECK(log.events[1].pci_bus_id == "00000000:2B:00.0");
    CHECK(log.events[1].xid == 79);
}

TEST_CASE("a log whose first records were overwritten does not reach back to boot; junk is no Xid") {
    const XidLog log = parse_kernel_log("6,120,5,-;NVRM: Xid (PCI:0000:10:1c): x, junk\nnot a record\n");
    CHECK(log.records == 1);
    CHECK_FALSE(log.from_boot);
    CHECK(log.events.empty());
}

TEST_CASE("the catalogue: hardware Xids fail, the application's warn at most") {
    for (int xid : {48, 64, 74, 79, 95, 119, 120}) CHECK(xid_meaning(xid)->kind == XidKind::hardware);
    for (int xid : {13, 31, 43}) CHECK(xid_meaning(xid)->kind == XidKind::application);
    for (int xid : {63, 92, 94}) CHECK(xid_meaning(xid)->kind == XidKind::attention);
    CHECK(xid_meaning(8) == nullptr);
    CHECK(xid_meaning(79)->nvml_counted == false);
    CHECK(xid_meaning(48)->nvml_counted);
}

TEST_CASE("a descriptor is NVIDIA's dma-buf only with exporter nv_dmabuf and the size asked") {
    gpu::DmaBufInfo info;
    info.fd = 7;
    info.exporter = "nv_dmabuf";
    info.size = 2097152;
    info.end = 2097152;
    CHECK_FALSE(gpu::dma_buf_mismatch(info, 2097152));
    CHECK(gpu::dma_buf_mismatch(info, 4194304)->find("2097152 bytes by its fdinfo, 4194304 asked") !=
          std::string::npos);
    info.exporter = "udmabuf";
    CHECK(gpu::dma_buf_mismatch(info, 2097152)->find("not NVIDIA's") != std::string::npos);
    info.exporter.clear();
    info.link = "/memfd:fakecuda-dmabuf (deleted)";
    CHECK(gpu::dma_buf_mismatch(info, 2097152)->find("is no dma-buf") != std::string::npos);
}
