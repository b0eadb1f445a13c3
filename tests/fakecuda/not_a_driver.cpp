// A shared library that is not a CUDA driver: it lacks cuGetProcAddress_v2. Tests point --libcuda at it.
extern "C" int not_a_cuda_driver() {
    return 42;
}
