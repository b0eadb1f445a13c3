#include <doctest/doctest.h>

#include <cstdlib>

#include "driver_table.hpp"
#include "gpu/device/devices.hpp"

using namespace cumemctl;
using namespace cumemctl::gpu;

TEST_CASE("query_device reads attributes and reports unknown ones as unknown") {
    auto& m = testing_driver::model();
    m = testing_driver::Model{};
    m.attrs = {{CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, 9},
               {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, 0},
               {CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1},
               {CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_FABRIC_SUPPORTED, 1},
               {CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED, 0},
               {CU_DEVICE_ATTRIBUTE_MEMPOOL_SUPPORTED_HANDLE_TYPES, 9}};
    const auto api = testing_driver::table();
    const DeviceInfo info = query_device(api, 0);
    CHECK(info.name == "Test GPU");
    CHECK(info.cc_major == 9);
    CHECK(info.uuid == "GPU-00112233-4455-6677-8899-aabbccddeeff");
    auto cap = [&](std::string_view key) {
        for (const auto& c : info.capabilities) {
            if (c.key == key) return c.value;
        }
        FAIL("no capability ", key);
        return std::optional<int>{};
    };
    CHECK(cap("vmm") == 1);
    CHECK(cap("fabric") == 1);
    CHECK(cap("multicast") == 0);
    CHECK_FALSE(cap("le_unicast").has_value());
    CHECK(handle_type_names(*cap("pool_handle_types")) == std::vector<std::string>{"posix-fd", "fabric"});
}

TEST_CASE("query_free_memory releases the contexts it retains and reports failures") {
    auto& m = testing_driver::model();
    m = testing_driver::Model{};
    m.device_count = 2;
    const auto api = testing_driver::table();
    std::vector<DeviceInfo> devices{query_device(api, 0), query_device(api, 1)};
    query_free_memory(api, devices);
    CHECK(devices[0].free_bytes == m.free);
    CHECK(devices[1].free_bytes == m.free);
    CHECK(m.retained == 0);
    m.retain_result = CUDA_ERROR_OUT_OF_MEMORY;
    query_free_memory(api, devices = {query_device(api, 0)});
    CHECK_FALSE(devices[0].free_bytes.has_value());
    CHECK(devices[0].free_error.find("cuDevicePrimaryCtxRetain") != std::string::npos);
}

TEST_CASE("select_devices tells a bad list from a device that does not exist") {
    CHECK(select_devices(parse_device_list("all"), 2) == std::vector<int>{0, 1});
    CHECK(select_devices(parse_device_list("1"), 2) == std::vector<int>{1});
    try {
        select_devices(parse_device_list("7"), 1);
        FAIL("accepted");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::unavailable);
        CHECK(e.problem().remedy == "this node has one CUDA device: 0");
    }
    for (std::string bad : {"-1", "x", ""}) {
        CAPTURE(bad);
        try {
            select_devices(parse_device_list(bad), 1);
            FAIL("accepted");
        } catch (const Error& e) {
            CHECK(e.exit_code() == ExitCode::usage);
        }
    }
}

TEST_CASE("parse_device_list checks a list's syntax without a driver, and select checks the devices") {
    auto usage = [](std::string_view spec) {
        try {
            parse_device_list(spec);
        } catch (const Error& e) {
            return e.exit_code() == ExitCode::usage;
        }
        return false;
    };
    CHECK(usage("x"));
    CHECK(usage(""));
    CHECK(usage("3-1"));
    CHECK(usage("-1"));
    CHECK(usage("GPU-"));
    CHECK(usage("GPU-xyz"));
    CHECK(usage("3b:00"));
    CHECK(usage("zz:00.0"));
    const auto api = testing_driver::table();
    CHECK(parse_device_list("all").select(api, 3) == std::vector<int>{0, 1, 2});
    CHECK(parse_device_list(" 2, 0 ").select(api, 3) == std::vector<int>{0, 2});
    const DeviceList seven = parse_device_list("7");  // syntax only: no device count yet
    CHECK(seven.select(api, 8) == std::vector<int>{7});
    CHECK(seven.names_one());
    CHECK_FALSE(parse_device_list("0-1").names_one());
    CHECK(parse_device_list("GPU-0011").names_one());
    try {
        seven.select(api, 2);
        FAIL("device 7 of 2 accepted");
    } catch (const Error& e) {
        CHECK(e.exit_code() == ExitCode::unavailable);
    }
}

TEST_CASE("a device list is parsed once into typed items, which select only looks up") {
    const DeviceList list = parse_device_list(" 2, GPU-00AB, nvidia03, 3b:00.0 ,0-1 ");
    CHECK_FALSE(list.all);
    REQUIRE(list.items.size() == 5);
    CHECK(list.items[0].kind == DeviceItemKind::ordinals);
    CHECK(list.items[0].ordinals == std::vector<int>{2});
    CHECK(list.items[1].kind == DeviceItemKind::uuid);
    CHECK(list.items[1].text == "gpu-00ab");   // matched lower-cased
    CHECK(list.items[1].typed == "GPU-00AB");  // named in messages as typed
    CHECK(list.items[2].kind == DeviceItemKind::nvml_index);
    CHECK(list.items[2].text == "3");
    CHECK(list.items[3].kind == DeviceItemKind::pci_bus_id);
    CHECK(list.items[3].text == "00000000:3B:00.0");
    CHECK(list.items[4].ordinals == std::vector<int>{0, 1});
    CHECK(parse_device_list(" all ").all);
    CHECK(parse_device_list(" all ").items.empty());
    CHECK(DeviceList{}.all);  // a command's default: every device
    CHECK(parse_device_list("3").ordinal() == 3);
    CHECK_FALSE(parse_device_list("3-4").ordinal().has_value());
    CHECK_FALSE(parse_device_list("GPU-0011").ordinal().has_value());
    // An ordinal list needs no driver to select from; a UUID does.
    CHECK(select_devices(parse_device_list("1,0"), 2) == std::vector<int>{0, 1});
    CHECK_THROWS_AS(select_devices(parse_device_list("GPU-0011"), 2), Error);
}

TEST_CASE("normal_pci_bus_id writes a bus id as nvidia-smi does, whichever form it was given in") {
    CHECK(normal_pci_bus_id("3b:00.0") == "00000000:3B:00.0");
    CHECK(normal_pci_bus_id("0000:3b:00.0") == "00000000:3B:00.0");
    CHECK(normal_pci_bus_id("00000001:3B:1f.7") == "00000001:3B:1F.7");
    CHECK_FALSE(normal_pci_bus_id("3b:00").has_value());
    CHECK_FALSE(normal_pci_bus_id("3b:20.0").has_value());  // a device number is 5 bits
    CHECK_FALSE(normal_pci_bus_id("3b:00.8").has_value());  // a function is 3 bits
    CHECK_FALSE(normal_pci_bus_id("x:3b:00.0").has_value());
}

TEST_CASE("the kernel's, the driver's and a typed bus id of one GPU normalise to one text") {
    // /proc/driver/nvidia/gpus names a GPU "0000:2a:00.0"; cuDeviceGetPCIBusId and NVML "00000000:2A:00.0".
    const auto kernel = normal_pci_bus_id("0000:2a:00.0");
    REQUIRE(kernel.has_value());
    CHECK(*kernel == "00000000:2A:00.0");
    CHECK(normal_pci_bus_id("00000000:2A:00.0") == kernel);
    CHECK(normal_pci_bus_id("2A:00.0") == kernel);
    CHECK(normal_pci_bus_id(*kernel) == kernel);  // a normal bus id stays as it is
    CHECK(normal_pci_bus_id("ffffffff:ff:1f.7") == "FFFFFFFF:FF:1F.7");
    // Text around a bus id is no bus id: where it does not parse, callers keep the text as it was.
    CHECK_FALSE(normal_pci_bus_id("0000:2a:00.0\n").has_value());
    CHECK_FALSE(normal_pci_bus_id(" 0000:2a:00.0").has_value());
    CHECK_FALSE(normal_pci_bus_id("100000000:2a:00.0").has_value());  // a domain is 32 bits
    CHECK_FALSE(normal_pci_bus_id("").has_value());
}

TEST_CASE("child_device_view: a second process sees only the device, by UUID, as its device 0") {
    auto& m = testing_driver::model();
    m = testing_driver::Model{};
    m.device_count = 2;
    const auto api = testing_driver::table();
    unsetenv("CUDA_VISIBLE_DEVICES");
    ChildDeviceView view = child_device_view(api, 1);
    CHECK(view.ordinal == 0);
    REQUIRE(view.env.size() == 1);
    CHECK(view.env[0].first == "CUDA_VISIBLE_DEVICES");
    CHECK(view.env[0].second == "GPU-00112233-4455-6677-8899-aabbccddeeff");
    // Where this process sees MIG instances, the child sees what it sees (a MIG UUID is not GPU-...).
    setenv("CUDA_VISIBLE_DEVICES", "MIG-0a1b2c3d-0000-0000-0000-000000000000", 1);
    view = child_device_view(api, 1);
    CHECK(view.ordinal == 1);
    CHECK(view.env.empty());
    unsetenv("CUDA_VISIBLE_DEVICES");
    // Without cuDeviceGetUuid the child keeps the ordinal.
    auto no_uuid = api;
    no_uuid.cuDeviceGetUuid = nullptr;
    view = child_device_view(no_uuid, 1);
    CHECK(view.ordinal == 1);
    CHECK(view.env.empty());
}
