// The memory ledger every DeviceBuffer reports to, and byte counts for messages. Plain C++: the real
// buffers (buffer.cu) and the unit tests' emulation of them (tests/common/gpu_*_on_cpu.cpp) share it.
#include <cstdio>

#include "buffer.hpp"

namespace attn::gpu {

MemoryLedger& ledger() {
    static MemoryLedger the_ledger;
    return the_ledger;
}

std::string format_bytes(std::size_t bytes) {
    char buf[32];
    const double mib = static_cast<double>(bytes) / (1 << 20);
    if (mib >= 1024.0)
        std::snprintf(buf, sizeof buf, "%.2f GiB", mib / 1024.0);
    else
        std::snprintf(buf, sizeof buf, "%.1f MiB", mib);
    return buf;
}

void require_ledger_room(std::size_t bytes, const std::string& what) {
    const MemoryLedger& book = ledger();
    if (!book.admits(bytes))
        throw OutOfMemory("gpu::DeviceBuffer: cannot allocate " + format_bytes(bytes) + " for " + what + ": " +
                          format_bytes(book.current()) + " already held of the " + format_bytes(book.limit()) +
                          " this run allows (out of memory)");
}

}  // namespace attn::gpu
