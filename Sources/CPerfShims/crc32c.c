// CRC-32C with the CPU's own instruction where it has one (SSE4.2 `crc32` on x86_64, the CRC
// extension on aarch64), chosen at run time: the journal checksums every entry before it takes its
// lock, so this is on every append's path, and it bounds recovery speed.
#include "CPerfShims.h"

#if defined(__x86_64__)
#include <nmmintrin.h>

__attribute__((target("sse4.2")))
static uint32_t crc32c_sse42(uint32_t state, const uint8_t *bytes, size_t count) {
    uint64_t wide = state;
    while (count >= 8) {
        uint64_t word;
        __builtin_memcpy(&word, bytes, 8);
        wide = _mm_crc32_u64(wide, word);
        bytes += 8;
        count -= 8;
    }
    uint32_t narrow = (uint32_t)wide;
    while (count > 0) {
        narrow = _mm_crc32_u8(narrow, *bytes++);
        count -= 1;
    }
    return narrow;
}

int perf_crc32c_hardware_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

uint32_t perf_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    return ~crc32c_sse42(~crc, (const uint8_t *)bytes, count);
}

#elif defined(__aarch64__)
#include <sys/auxv.h>
#include <asm/hwcap.h>

__attribute__((target("crc")))
static uint32_t crc32c_arm(uint32_t state, const uint8_t *bytes, size_t count) {
    while (count >= 8) {
        uint64_t word;
        __builtin_memcpy(&word, bytes, 8);
        state = __builtin_arm_crc32cd(state, word);
        bytes += 8;
        count -= 8;
    }
    while (count > 0) {
        state = __builtin_arm_crc32cb(state, *bytes++);
        count -= 1;
    }
    return state;
}

int perf_crc32c_hardware_available(void) {
    return (getauxval(AT_HWCAP) & HWCAP_CRC32) != 0 ? 1 : 0;
}

uint32_t perf_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    return ~crc32c_arm(~crc, (const uint8_t *)bytes, count);
}

#else

int perf_crc32c_hardware_available(void) { return 0; }

uint32_t perf_crc32c_hardware(uint32_t crc, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return crc;
}

#endif
