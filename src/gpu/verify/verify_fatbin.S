// Embeds the verify kernels' fatbin (built by nvcc from verify_kernels.cu; CMake passes its path as
// CUMEMCTL_VERIFY_FATBIN_PATH) in the core library as the symbols cumemctl_verify_fatbin and
// cumemctl_verify_fatbin_end, for cuModuleLoadData. No generated source code is involved.
    .section .rodata.cumemctl_verify_fatbin, "a", @progbits
    .balign 64
    .globl cumemctl_verify_fatbin
    .hidden cumemctl_verify_fatbin
    .type cumemctl_verify_fatbin, @object
cumemctl_verify_fatbin:
    .incbin CUMEMCTL_VERIFY_FATBIN_PATH
    .globl cumemctl_verify_fatbin_end
    .hidden cumemctl_verify_fatbin_end
cumemctl_verify_fatbin_end:
    .size cumemctl_verify_fatbin, cumemctl_verify_fatbin_end - cumemctl_verify_fatbin
    .section .note.GNU-stack, "", @progbits
