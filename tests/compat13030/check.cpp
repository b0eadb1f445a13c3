// Compiled only with the test headers of this directory first on the include path: proves that they,
// not the toolkit's headers alone, were used, and that the compat header then declares nothing.
#include "cuda/logical_endpoint_compat.hpp"

#ifndef CUMEMCTL_TEST_CUDA_SHIM
#error "tests/compat13030/cuda.h was not included: the include path is wrong"
#endif
static_assert(CUDA_VERSION >= 13030, "the test header must say CUDA 13.3");
static_assert(sizeof(CUlogicalEndpointProp) == 24, "CUlogicalEndpointProp ABI: 24 bytes");
// The entry point types the driver table uses come from the (test) toolkit headers.
static_assert(sizeof(PFN_cuLogicalEndpointBindMem_v13030) == sizeof(void*), "PFN typedefs declared");
