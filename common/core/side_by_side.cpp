#include "core/side_by_side.hpp"

#include <sched.h>

#include <algorithm>
#include <cstdlib>

namespace attn {

namespace {
thread_local bool inside = false;  // this thread is running a job

int thread_limit() {  // ATTN_THREADS=N: at most N threads; unset, 0 or not a number: no limit
    static const int limit = [] {
        const char* v = std::getenv("ATTN_THREADS");
        char* end = nullptr;
        const long n = v ? std::strtol(v, &end, 10) : 0;
        return v && end != v && *end == '\0' && n > 0 && n < 4096 ? static_cast<int>(n) : 0;
    }();
    return limit;
}

int affinity_cores() {
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    return sched_getaffinity(0, sizeof cpus, &cpus) == 0 ? std::max(1, CPU_COUNT(&cpus)) : 1;
}
}  // namespace

int usable_cores() { return thread_limit() > 0 ? std::min(affinity_cores(), thread_limit()) : affinity_cores(); }

bool in_side_by_side() { return inside; }

SideBySide::SideBySide(std::size_t n, std::function<void(std::size_t)> job, int threads)
    : n_(n), job_(std::move(job)), errors_(n) {
    // Inside another SideBySide's helper the cores are taken: this one's jobs run in wait(), on that helper's thread.
    const int cap = threads > 0 ? threads : usable_cores();
    const std::size_t helpers = inside ? 0 : std::min<std::size_t>(n, static_cast<std::size_t>(std::max(0, cap - 1)));
    for (std::size_t t = 0; t < helpers; ++t) threads_.emplace_back([this] { work(true); });
}

bool SideBySide::take(std::size_t& i) {
    std::lock_guard<std::mutex> lock(m_);
    if (stop_ || next_ >= n_) return false;
    i = next_++;
    return true;
}

void SideBySide::work(bool helper) {
    // The helpers' jobs keep to their thread; the caller's (in wait()) are as its own work: its progress bars show.
    const bool was_inside = inside;
    inside = helper || was_inside;
    for (std::size_t i = 0; take(i);) {
        try {
            job_(i);
        } catch (...) {
            std::lock_guard<std::mutex> lock(m_);
            errors_[i] = std::current_exception();
            stop_ = true;  // the jobs not yet started would be lost work
        }
    }
    inside = was_inside;
}

void SideBySide::finish() {
    for (std::thread& t : threads_)
        if (t.joinable()) t.join();
    threads_.clear();
}

void SideBySide::wait() {
    work(false);  // the calling thread takes the jobs not yet started
    finish();
    for (const std::exception_ptr& e : errors_)
        if (e) std::rethrow_exception(e);
}

SideBySide::~SideBySide() {
    {
        std::lock_guard<std::mutex> lock(m_);
        stop_ = true;
    }
    finish();
}

void side_by_side(std::size_t n, const std::function<void(std::size_t)>& job, int threads) { SideBySide(n, job, threads).wait(); }

}  // namespace attn
