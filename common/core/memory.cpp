// Section 9.8: peak resident memory of a call, read from /proc/self (see core/memory.hpp for the method
// and its limits).
#include "core/memory.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace attn {

namespace {
// The value of one "Name:   1234 kB" line of /proc/self/status, in bytes; 0 when absent.
std::size_t status_field(const char* name) {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return 0;
    const std::size_t len = std::strlen(name);
    char line[256];
    std::size_t bytes = 0;
    while (std::fgets(line, sizeof line, f)) {
        if (std::strncmp(line, name, len) == 0 && line[len] == ':') {
            bytes = static_cast<std::size_t>(std::strtoull(line + len + 1, nullptr, 10)) * 1024;  // kB
            break;
        }
    }
    std::fclose(f);
    return bytes;
}
}  // namespace

std::size_t resident_bytes() { return status_field("VmRSS"); }
std::size_t peak_resident_bytes() { return status_field("VmHWM"); }

bool reset_peak_resident() {
    std::FILE* f = std::fopen("/proc/self/clear_refs", "w");
    if (!f) return false;
    const bool written = std::fputs("5", f) >= 0;  // 5: reset the peak RSS (Linux ≥ 4.0)
    return std::fclose(f) == 0 && written;
}

PeakMemory measure_peak_memory(const std::function<void()>& body) {
#if defined(__GLIBC__)
    malloc_trim(0);  // freed heap pages back to the system, so the call cannot reuse them unseen
#endif
    PeakMemory m;
    m.before = resident_bytes();
    m.reset = reset_peak_resident();
    body();
    m.peak = peak_resident_bytes();
    return m;
}

void keep_freed_memory() {
#if defined(__GLIBC__)
    // Every block from the heap, none mapped on its own: glibc caps the mmap threshold at 32 MiB, and the
    // readout's logits and probabilities at the chapter's size (8192 × 1024 floats) are 32 MiB each.
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);  // and freeing them never shrinks it (malloc_trim still does)
#endif
}

}  // namespace attn
