// Independent runs side by side on the cores: the seeds of a sweep, each trained from start to end on a thread of
// its own. Each job writes only its own result, and inside a job the library's products and loops stay on that
// job's thread, so what the jobs compute is the same bits as one after the other, on any number of cores.
// What two jobs do share is OpenBLAS, which takes one lock around its buffers at every product: where a model
// makes many small products they queue there (12_language_model --quick's 12-block norm models, width 32: 2.9 s
// each alone on a core, 5.4 s each two side by side; the pronoun models of 05_multi_head scale 1.96x on two
// threads). Two processes share nothing: tools/tour.sh runs the programs two at a time that way.
#pragma once

#include <cstddef>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace attn {

// The cores this process may run on (its affinity mask), at most ATTN_THREADS=N when that is set in the
// environment (the tests set 1: ctest runs two programs at a time on two cores).
int usable_cores();
// Whether this thread is one of SideBySide's helper threads, running a job beside the caller's work.
bool in_side_by_side();

// SideBySide jobs(n, job) starts job(0), job(1), … in that order on usable_cores() − 1 threads of its own, while
// the caller goes on with its own work (the first seed, with its tables); wait() then runs the jobs not yet
// started on the calling thread too, and returns when all are done. On one core every job runs inside wait(),
// one after another. A job that throws stops the jobs not yet started; wait() rethrows the exception of the
// lowest-numbered job that threw. `threads` caps the threads, the caller's included (0: usable_cores(); 1: every
// job inside wait(), one after another, as for a GPU run, whose one device the jobs would share).
class SideBySide {
public:
    SideBySide(std::size_t n, std::function<void(std::size_t)> job, int threads = 0);
    SideBySide(const SideBySide&) = delete;
    SideBySide& operator=(const SideBySide&) = delete;
    ~SideBySide();  // stops the jobs not yet started and waits for the running ones; never throws
    void wait();

private:
    void work(bool helper);
    bool take(std::size_t& i);
    void finish();

    std::size_t n_;
    std::function<void(std::size_t)> job_;
    std::mutex m_;
    std::size_t next_ = 0;
    bool stop_ = false;
    std::vector<std::exception_ptr> errors_;
    std::vector<std::thread> threads_;
};

// Runs job(0) … job(n − 1) side by side and waits: SideBySide(n, job, threads).wait().
void side_by_side(std::size_t n, const std::function<void(std::size_t)>& job, int threads = 0);

}  // namespace attn
