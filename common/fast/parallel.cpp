#include "parallel.hpp"

#include "core/side_by_side.hpp"

#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace attn::fast {

namespace {

thread_local bool inside_job = false;  // this thread is running a job's body

// Worker threads that sleep on a condition variable between jobs. OpenMP's threads (libgomp) spin-wait
// between parallel regions instead: alone on the machine that is harmless, but two such processes on two
// cores (ctest's two jobs, or a build beside a training run) run 10× slower than one after the other, and
// the spin can only be turned off from the environment (OMP_WAIT_POLICY), before the program starts.
class Pool {
public:
    void run(int n, const std::function<void(int, int)>& body) {
        std::lock_guard<std::mutex> one_job(job_);  // callers on different threads take turns
        while (static_cast<int>(threads_.size()) < n - 1) {
            const int index = static_cast<int>(threads_.size()) + 1;
            threads_.emplace_back([this, index] { work(index); });
        }
        {
            std::lock_guard<std::mutex> lock(m_);
            body_ = &body, n_ = n, remaining_ = n - 1, ++generation_;
        }
        start_.notify_all();
        inside_job = true;
        std::exception_ptr failure;  // the other threads still read body: wait for them before rethrowing
        try {
            body(0, n);
        } catch (...) {
            failure = std::current_exception();
        }
        inside_job = false;
        std::unique_lock<std::mutex> lock(m_);
        done_.wait(lock, [this] { return remaining_ == 0; });
        body_ = nullptr;
        if (failure) std::rethrow_exception(failure);
    }

private:
    void work(int index) {
        std::uint64_t seen = 0;
        for (;;) {
            const std::function<void(int, int)>* body = nullptr;
            int n = 0;
            {
                std::unique_lock<std::mutex> lock(m_);
                start_.wait(lock, [&] { return generation_ != seen; });
                seen = generation_, body = body_, n = n_;
            }
            if (index >= n) continue;  // a smaller job than there are threads: not this one's
            inside_job = true;
            (*body)(index, n);
            inside_job = false;
            std::lock_guard<std::mutex> lock(m_);
            if (--remaining_ == 0) done_.notify_one();
        }
    }

    std::mutex job_, m_;
    std::condition_variable start_, done_;
    std::vector<std::thread> threads_;
    const std::function<void(int, int)>* body_ = nullptr;
    int n_ = 0, remaining_ = 0;
    std::uint64_t generation_ = 0;
};

// One pool per process. A child of fork() has none of its parent's threads: it starts its own (the parent's
// pool object is left as it is, never touched again in the child).
Pool& pool() {
    static pid_t owner = getpid();
    static Pool* p = new Pool;  // never destroyed: its threads sleep until the process ends
    if (getpid() != owner) owner = getpid(), p = new Pool;
    return *p;
}

}  // namespace

// A SideBySide job (core/side_by_side.hpp) has its core already: its loops stay on its thread, as a body's do.
bool on_pool_thread() { return inside_job || in_side_by_side(); }

void run_on_threads(int n, const std::function<void(int, int)>& body) {
    if (n <= 1 || on_pool_thread()) {
        for (int i = 0; i < std::max(n, 1); ++i) body(i, std::max(n, 1));
        return;
    }
    pool().run(n, body);
}

}  // namespace attn::fast
