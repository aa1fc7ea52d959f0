// The emulator's runtime: guarded device memory, the launch's threads, its barriers and its time bound.
// See cuda_on_cpu_runtime.hpp for what each does; here is how.
//
// A fault is caught where it happens: during a launch, SIGSEGV and SIGBUS go to on_fault, which (in an
// emulated thread, inside its kernel) notes the address and jumps back to that thread's start with
// siglongjmp; the thread then marks the launch aborted, which wakes every other thread waiting at a barrier
// with Aborted. A launch past its time is stopped the same way: the pool sends SIGUSR2 to each OS thread
// still running a CUDA thread's kernel (with fibers, to the one worker, until none is left), and on_stop
// jumps back. Nothing in a kernel holds a lock or owns memory, so jumping out of
// one leaves nothing behind; a thread waiting inside a barrier is never jumped out of (it is woken instead).
#include "cuda_on_cpu_runtime.hpp"

#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <condition_variable>
#include <csetjmp>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <tuple>
#include <vector>

#include "core/error.hpp"
#include "cuda_on_cpu.hpp"

namespace cuda_on_cpu {

namespace {

// --- guarded device memory ---------------------------------------------------------------------------------------
// A buffer of `bytes` takes ⌈bytes / page⌉ pages between two pages nobody may touch:
//   [ no access ][ guard zone (canary) | data … last element ][ no access ]
// Its last element ends on a page boundary, so the first float past it is on a no-access page.
constexpr std::uint32_t kCanary = 0x7FC0DEADu;  // a quiet NaN as a float; as an index, far outside any buffer

struct Allocation {
    char* region;       // the mapping, guard pages included
    std::size_t pages;  // the whole mapping's
    std::size_t bytes;  // the buffer's
    std::string name;
};

std::size_t page_size() {
    static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
    return page;
}

std::mutex allocations_mutex;
std::map<const char*, Allocation> allocations;  // by the buffer's first byte

char* zone_begin(const Allocation& a) { return a.region + page_size(); }
char* data_begin(const Allocation& a) { return a.region + (a.pages - 1) * page_size() - a.bytes; }
void fill_zone(const Allocation& a) {
    for (char* q = zone_begin(a); q < data_begin(a); q += 4) std::memcpy(q, &kCanary, 4);
}

// --- the state of one emulated thread, and of the launch ----------------------------------------------------------
enum State : int { kOutside = 0, kInKernel = 1, kInBarrier = 2 };
thread_local volatile sig_atomic_t state = kOutside;
thread_local sigjmp_buf* jump = nullptr;
thread_local void* volatile fault_address = nullptr;
thread_local volatile int fault_access = -1;  // 1 write, 0 read, −1 not known (not x86-64)

std::atomic<bool> aborted{false};
std::mutex launch_mutex;  // guards what follows
std::vector<Barrier*> barriers;
struct Fault {
    void* address;
    int access;
    dim3 thread, block;
};
std::vector<Fault> faults;         // threads stopped by a fault
std::vector<std::pair<dim3, dim3>> stopped;  // threads stopped by the time limit: (thread, block)
std::chrono::milliseconds time_limit{10000};

struct sigaction previous_segv, previous_bus;

extern "C" void on_fault(int sig, siginfo_t* info, void* context) {
    if (state != kInKernel || jump == nullptr) {  // not a kernel's access: the handler before ours takes it
        sigaction(sig, sig == SIGSEGV ? &previous_segv : &previous_bus, nullptr);
        return;  // the access repeats, now under that handler
    }
    fault_address = info->si_addr;
#if defined(__x86_64__)
    fault_access = (static_cast<ucontext_t*>(context)->uc_mcontext.gregs[REG_ERR] & 2) != 0 ? 1 : 0;
#else
    (void)context;
    fault_access = -1;
#endif
    siglongjmp(*jump, 1);
}

extern "C" void on_stop(int) {
    if (state == kInKernel && jump != nullptr) siglongjmp(*jump, 2);  // at a barrier: the abort wakes it instead
}

// --- the pool: who plays a block's CUDA threads, kept from one launch to the next ---------------------------------
// Two ways, one interface. Under ThreadSanitizer (and AddressSanitizer, which does not follow stack switches) each
// CUDA thread is an OS thread: TSan then sees two CUDA threads touch shared memory with no barrier between
// them, a missing __syncthreads, whichever order they happen to run in. Elsewhere the CUDA threads are fibers
// on one OS thread, switched at each barrier: the same kernel source, the same barriers, faults and
// time bound, without the OS waking a few hundred threads at every __syncthreads (which cost a launch of a
// tiny kernel about 10 ms on two cores, and the tests most of their time).
//   (Creating an OS thread per CUDA thread at every launch cost even more: a training step launches a hundred.)
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ATTN_EMULATOR_FIBERS 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define ATTN_EMULATOR_FIBERS 0
#endif
#endif
#ifndef ATTN_EMULATOR_FIBERS
#define ATTN_EMULATOR_FIBERS 1
#endif

#if ATTN_EMULATOR_FIBERS
// Switching fibers: on x86-64 by saving the callee-saved registers on the fiber's own stack and swapping stack
// pointers (the System V ABI leaves nothing else to keep across a call); elsewhere with ucontext's swapcontext,
// which also saves the signal mask, a system call at every switch: correct, several times slower.
#if defined(__x86_64__)
extern "C" void attn_emulator_switch(void** save_sp, void* load_sp);
asm(R"(
    .text
    .p2align 4
    .type attn_emulator_switch, @function
attn_emulator_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size attn_emulator_switch, .-attn_emulator_switch
)");
struct Context {
    void* sp = nullptr;
};
inline void switch_context(Context& from, const Context& to) { attn_emulator_switch(&from.sp, to.sp); }
// A context that starts entry() on [stack, stack + bytes): the six registers attn_emulator_switch pops (zero),
// then entry's address for its `ret`, placed so that entry begins as if called (rsp + 8 a multiple of 16).
void prepare_context(Context& c, char* stack, std::size_t bytes, void (*entry)()) {
    auto* top = reinterpret_cast<void**>(reinterpret_cast<std::uintptr_t>(stack + bytes) & ~std::uintptr_t{15});
    top[-1] = nullptr;                          // entry's return address: entry never returns
    top[-2] = reinterpret_cast<void*>(entry);  // popped by ret
    for (int r = 3; r <= 8; ++r) top[-r] = nullptr;
    c.sp = top - 8;
}
#else
struct Context {
    ucontext_t uc{};
};
inline void switch_context(Context& from, const Context& to) { swapcontext(&from.uc, &to.uc); }
void prepare_context(Context& c, char* stack, std::size_t bytes, void (*entry)()) {
    getcontext(&c.uc);
    c.uc.uc_stack.ss_sp = stack;
    c.uc.uc_stack.ss_size = bytes;
    c.uc.uc_link = nullptr;  // entry never returns
    makecontext(&c.uc, entry, 0);
}
#endif

// A block's CUDA threads as fibers: each runs until it waits at a barrier (or ends), then the next one runs;
// a barrier's waiters run again once its last thread has arrived.
class Fibers {
public:
    // Runs body(t) for t = 0 … n − 1, each on a fiber of its own, until all have returned. Every live fiber
    // waiting at a barrier that the others never reach: waits for the time bound to abort the launch.
    void run(unsigned n, const std::function<void(unsigned)>& body) {
        while (fibers_.size() < n) fibers_.push_back(std::make_unique<Fiber>());
        body_ = &body;
        for (unsigned t = 0; t < n; ++t) {
            Fiber& f = *fibers_[t];
            if (f.stack == nullptr) f.stack = new_stack();
            prepare_context(f.context, f.stack, kStackBytes, &Fibers::start);
            f.index = t, f.done = false, f.barrier = nullptr;
        }
        for (unsigned live = n; live > 0;) {
            bool ran = false;
            for (unsigned t = 0; t < n; ++t) {
                Fiber& f = *fibers_[t];
                if (f.done || (f.barrier != nullptr && f.barrier->phase() == f.phase && !aborted.load(std::memory_order_acquire)))
                    continue;
                current_ = &f;
                switch_context(scheduler_, f.context);
                current_ = nullptr;
                ran = true;
                if (f.done) --live;
            }
            if (!ran) aborted.wait(false);  // a deadlock at a barrier: the time bound aborts it (the waiters then unwind)
        }
        body_ = nullptr;
    }

    // From a fiber waiting at `barrier`: runs the others until the barrier leaves `phase` (or the launch aborts).
    // The fiber's thread-local state (its CUDA thread's indices, its jump for a fault) is its own again after.
    void wait(const Barrier* barrier, unsigned phase) {
        Fiber& f = *current_;
        const dim3 t = thread_idx, b = block_idx;
        const sig_atomic_t s = state;
        sigjmp_buf* const j = jump;
        f.barrier = barrier, f.phase = phase;
        jump = nullptr;
        state = kOutside;  // the scheduler's code is no kernel's: a stop signal there waits
        switch_context(f.context, scheduler_);
        f.barrier = nullptr;
        thread_idx = t, block_idx = b, jump = j;
        state = s;
    }

    static Fibers& get() {
        static Fibers fibers;  // used by the pool's one worker thread only
        return fibers;
    }

private:
    static constexpr std::size_t kStackBytes = 256 * 1024;
    struct Fiber {
        Context context;
        char* stack = nullptr;  // kStackBytes, above a no-access page
        unsigned index = 0;     // its CUDA thread
        bool done = true;
        const Barrier* barrier = nullptr;  // waiting there while its phase is `phase`
        unsigned phase = 0;
    };
    static char* new_stack() {
        const std::size_t page = page_size();
        void* region = mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        if (region == MAP_FAILED) throw std::bad_alloc();
        mprotect(region, page, PROT_NONE);  // an overflowing stack faults, never writes another fiber's
        return static_cast<char*>(region) + page;
    }
    static void start() {
        Fibers& self = get();
        Fiber& f = *self.current_;
        (*self.body_)(f.index);
        f.done = true;
        switch_context(f.context, self.scheduler_);  // never resumed: the next launch prepares it anew
    }
    std::vector<std::unique_ptr<Fiber>> fibers_;  // their stacks are kept from one launch to the next
    Context scheduler_;
    Fiber* current_ = nullptr;
    const std::function<void(unsigned)>* body_ = nullptr;
};
#endif

class ThreadPool {
public:
    static ThreadPool& get() {
        static ThreadPool pool;
        return pool;
    }
    // Runs body(t) for t = 0 … n − 1, each on its own CUDA thread. Returns true when every one has returned;
    // false when blocks_finished stood still for longer than `limit` (a block that never ends), after stopping them.
    bool run(unsigned n, const std::function<void(unsigned)>& body, std::chrono::milliseconds limit) {
        std::unique_lock lock(mu_);
        const unsigned workers = kFibers ? 1 : n;  // with fibers, one OS thread plays them all
        while (workers_.size() < workers) {  // a new worker takes part from the next generation on, this one included
            const unsigned id = static_cast<unsigned>(workers_.size());
            running_.push_back(false);
            workers_.emplace_back([this, id, seen = generation_] { work(id, seen); });
        }
        body_ = &body, threads_ = n, active_ = workers, remaining_ = workers, ++generation_;
        start_.notify_all();
        std::uint64_t blocks = blocks_finished.load();
        auto since = std::chrono::steady_clock::now();  // the last time a block finished
        bool in_time = true;
        while (!done_.wait_for(lock, limit / 4, [&] { return remaining_ == 0; })) {
            const auto now = std::chrono::steady_clock::now();
            if (blocks_finished.load() != blocks) {
                blocks = blocks_finished.load(), since = now;
            } else if (now - since > limit) {
                in_time = false;
                break;
            }
        }
        if (!in_time) {
            lock.unlock();
            abort_launch();  // threads at a barrier wake; threads in the kernel's own code are interrupted:
            lock.lock();
            // (fibers: the one running is interrupted; each one after it that loops too, at the next signal)
            const auto every = std::chrono::milliseconds(kFibers ? 2 : 20);
            while (remaining_ > 0) {
                for (unsigned id = 0; id < workers; ++id)
                    if (running_[id]) pthread_kill(workers_[id].native_handle(), SIGUSR2);
                done_.wait_for(lock, every, [&] { return remaining_ == 0; });
            }
        }
        body_ = nullptr;
        return in_time;
    }
    ~ThreadPool() {
        {
            std::lock_guard lock(mu_);
            stop_ = true, ++generation_;
        }
        start_.notify_all();
        for (std::thread& w : workers_) w.join();
    }

private:
    void work(unsigned id, std::uint64_t seen) {
        std::unique_lock lock(mu_);
        for (;;) {
            start_.wait(lock, [&] { return generation_ != seen; });
            seen = generation_;
            if (stop_) return;
            if (id >= active_) continue;  // this launch has fewer threads
            const std::function<void(unsigned)>* body = body_;
            const unsigned threads = threads_;
            running_[id] = true;
            lock.unlock();
#if ATTN_EMULATOR_FIBERS
            Fibers::get().run(threads, *body);
#else
            (void)threads;
            (*body)(id);
#endif
            lock.lock();
            running_[id] = false;
            if (--remaining_ == 0) done_.notify_one();
        }
    }
    std::mutex mu_;
    std::condition_variable start_, done_;
    std::vector<std::thread> workers_;
    std::vector<bool> running_;
    const std::function<void(unsigned)>* body_ = nullptr;
    unsigned threads_ = 0, active_ = 0, remaining_ = 0;  // CUDA threads; OS threads taking part, still running
    static constexpr bool kFibers = ATTN_EMULATOR_FIBERS != 0;
    std::uint64_t generation_ = 0;
    bool stop_ = false;
};

std::string dim_text(dim3 d) { return "(" + std::to_string(d.x) + ", " + std::to_string(d.y) + ")"; }

// "y[1000], past the end of y's 1000 elements": where `address` lies, in floats (every buffer holds 4-byte
// floats or ints).
std::string locate(const void* address) {
    const char* p = static_cast<const char*>(address);
    std::lock_guard lock(allocations_mutex);
    for (const auto& [data, a] : allocations) {
        if (p < a.region || p >= a.region + a.pages * page_size()) continue;
        const long long index = (p - data) / 4 - (p < data && (data - p) % 4 != 0 ? 1 : 0);
        const std::string count = std::to_string(a.bytes / 4);
        return a.name + "[" + std::to_string(index) + "], " + (index < 0 ? "before the start" : "past the end") + " of " +
               a.name + "'s " + count + " elements";
    }
    char hex[32];
    std::snprintf(hex, sizeof hex, "%p", address);
    return std::string("address ") + hex + ", which is in no device buffer (a wild index or pointer)";
}

// The first guard zone a launch wrote, or "".
std::string changed_guard_zone(const char* kernel) {
    std::lock_guard lock(allocations_mutex);
    for (const auto& [data, a] : allocations)
        for (const char* p = data - 4; p >= zone_begin(a); p -= 4) {  // nearest the data first: the likeliest
            std::uint32_t word;
            std::memcpy(&word, p, 4);
            if (word == kCanary) continue;
            const long long index = (p - data) / 4;
            fill_zone(a);  // for the launches after
            return std::string("kernel ") + kernel + " wrote " + a.name + "[" + std::to_string(index) +
                   "], before the start of " + a.name + "'s " + std::to_string(a.bytes / 4) +
                   " elements (found in the buffer's guard zone after the launch, so which thread wrote it is not known)";
        }
    return "";
}

}  // namespace

void* allocate(std::size_t bytes, const std::string& name) {
    const std::size_t page = page_size(), data_pages = std::max<std::size_t>(1, (bytes + page - 1) / page);
    Allocation a{nullptr, data_pages + 2, bytes, name};
    void* region = mmap(nullptr, a.pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region == MAP_FAILED) throw std::bad_alloc();
    a.region = static_cast<char*>(region);
    mprotect(a.region, page, PROT_NONE);
    mprotect(a.region + (a.pages - 1) * page, page, PROT_NONE);
    char* data = data_begin(a);
    fill_zone(a);
    std::memset(data, 0xFF, bytes);  // 0xFFFFFFFF: an unwritten float reads NaN, an unwritten index −1
    std::lock_guard lock(allocations_mutex);
    allocations.emplace(data, std::move(a));
    return data;
}

void release(void* data) noexcept {
    std::lock_guard lock(allocations_mutex);
    const auto it = allocations.find(static_cast<const char*>(data));
    if (it == allocations.end()) return;
    munmap(it->second.region, it->second.pages * page_size());
    allocations.erase(it);
}

std::chrono::milliseconds launch_time_limit() { return time_limit; }
void set_launch_time_limit(std::chrono::milliseconds limit) { time_limit = limit; }

namespace {
std::atomic<bool> tf32_products{false};
}  // namespace
void set_tf32(bool on) { tf32_products = on; }

float to_tf32(float x) {
    if (!std::isfinite(x)) return x;
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    u += 0x0FFFu + ((u >> 13) & 1u);  // to nearest on the 13 bits dropped, ties to even
    u &= 0xFFFFE000u;
    std::memcpy(&x, &u, sizeof x);
    return x;
}

void column_major_sgemm(bool trans_a, bool trans_b, int m, int n, int k, float alpha, const float* A, int lda, const float* B,
                        int ldb, float beta, float* C, int ldc) {
    const bool tf32 = tf32_products;
    for (int j = 0; j < n; ++j)
        for (int i = 0; i < m; ++i) {
            double s = 0;
            for (int p = 0; p < k; ++p) {
                const float a = trans_a ? A[p + static_cast<long long>(i) * lda] : A[i + static_cast<long long>(p) * lda];  // op(A)(i, p)
                const float b = trans_b ? B[j + static_cast<long long>(p) * ldb] : B[p + static_cast<long long>(j) * ldb];  // op(B)(p, j)
                s += tf32 ? static_cast<double>(to_tf32(a)) * to_tf32(b) : static_cast<double>(a) * b;
            }
            float& c = C[i + static_cast<long long>(j) * ldc];
            c = static_cast<float>(alpha * s + (beta == 0.0f ? 0.0 : static_cast<double>(beta) * c));  // beta = 0: C is not read
        }
}

namespace {
std::atomic<std::size_t> shared_limit{232'448};
}  // namespace
std::size_t shared_bytes_per_block() { return shared_limit; }
void set_shared_bytes_per_block(std::size_t bytes) { shared_limit = bytes; }

void Barrier::arrive_and_wait() {
    if (aborted.load(std::memory_order_acquire)) throw Aborted{};
    state = kInBarrier;
    const unsigned phase = phase_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == count_) {
        arrived_.store(0, std::memory_order_relaxed);  // nobody arrives for the next phase before it begins
        phase_.fetch_add(1, std::memory_order_acq_rel);
        phase_.notify_all();
    } else {
#if ATTN_EMULATOR_FIBERS
        Fibers::get().wait(this, phase);
#else
        while (phase_.load(std::memory_order_acquire) == phase) phase_.wait(phase, std::memory_order_acquire);
#endif
    }
    state = kInKernel;
    if (aborted.load(std::memory_order_acquire)) throw Aborted{};
}

void register_barrier(Barrier* barrier) {
    std::lock_guard lock(launch_mutex);
    barriers.push_back(barrier);
}

void abort_launch() {
    aborted.store(true, std::memory_order_release);
    aborted.notify_all();  // a fiber scheduler waiting out a deadlock
    std::lock_guard lock(launch_mutex);
    for (Barrier* b : barriers) {
        b->phase_.fetch_add(1, std::memory_order_acq_rel);
        b->phase_.notify_all();
    }
}

void run_launch(const char* kernel, unsigned threads, const std::function<void(unsigned)>& body) {
    struct sigaction on_fault_action {}, on_stop_action{};
    on_fault_action.sa_sigaction = on_fault;
    // SA_NODEFER: a handler that jumps out leaves its signal unblocked, so sigsetjmp need not save the mask
    // (a system call at every CUDA thread's start)
    on_fault_action.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&on_fault_action.sa_mask);
    on_stop_action.sa_handler = on_stop;
    on_stop_action.sa_flags = SA_NODEFER;
    sigemptyset(&on_stop_action.sa_mask);
    sigaction(SIGSEGV, &on_fault_action, &previous_segv);
    sigaction(SIGBUS, &on_fault_action, &previous_bus);
    // on_stop stays installed: a stop signal may still be pending when the launch returns
    static const bool stop_installed = sigaction(SIGUSR2, &on_stop_action, nullptr) == 0;
    (void)stop_installed;

    const auto guarded = [&](unsigned t) {
        sigjmp_buf here;
        jump = &here;
        const int how = sigsetjmp(here, 0);
        if (how == 0) {
            state = kInKernel;
            try {
                body(t);
            } catch (const Aborted&) {
            }
            state = kOutside;
        } else {  // back from on_fault (1) or on_stop (2)
            state = kOutside;
            {
                std::lock_guard lock(launch_mutex);
                if (how == 1) faults.push_back({fault_address, fault_access, thread_idx, block_idx});
                else stopped.emplace_back(thread_idx, block_idx);
            }
            abort_launch();
        }
        jump = nullptr;
    };
    const bool in_time = ThreadPool::get().run(threads, guarded, time_limit);

    sigaction(SIGSEGV, &previous_segv, nullptr);
    sigaction(SIGBUS, &previous_bus, nullptr);
    std::string message;
    {
        std::lock_guard lock(launch_mutex);
        if (!faults.empty()) {  // the first thread of the first block that faulted, whichever faulted first in time
            const Fault& f = *std::min_element(faults.begin(), faults.end(), [](const Fault& a, const Fault& b) {
                return std::tie(a.block.y, a.block.x, a.thread.x) < std::tie(b.block.y, b.block.x, b.thread.x);
            });
            const char* verb = f.access == 1 ? " wrote " : f.access == 0 ? " read " : " touched ";
            message = std::string("kernel ") + kernel + ", thread " + std::to_string(f.thread.x) + " of block " +
                      dim_text(f.block) + verb + locate(f.address) +
                      (faults.size() > 1 ? " (and " + std::to_string(faults.size() - 1) + " more threads faulted)" : "");
        } else if (!in_time) {
            char seconds[32];
            std::snprintf(seconds, sizeof seconds, "%.1f s", static_cast<double>(time_limit.count()) / 1000.0);
            message = std::string("kernel ") + kernel + " was stopped: one block ran for over " + seconds + " (an endless loop?): ";
            if (stopped.empty()) {
                message += "its threads were all waiting at a barrier (__syncthreads that some threads never reach?)";
            } else {
                std::sort(stopped.begin(), stopped.end(), [](const auto& a, const auto& b) {
                    return std::tie(a.second.y, a.second.x, a.first.x) < std::tie(b.second.y, b.second.x, b.first.x);
                });
                message += "thread " + std::to_string(stopped.front().first.x) + " of block " + dim_text(stopped.front().second);
                message += stopped.size() == 1 ? " was" : " and " + std::to_string(stopped.size() - 1) + " more threads were";
                message += " still in the kernel";
            }
        }
        faults.clear(), stopped.clear(), barriers.clear();
        aborted.store(false);
    }
    if (message.empty()) message = changed_guard_zone(kernel);
    if (!message.empty()) throw attn::Error(message);
}

}  // namespace cuda_on_cpu
