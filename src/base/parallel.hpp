// OpenMP helpers shared by the stages that run threads (tokenizer, trainer,
// kernels): how a requested thread count becomes a real one, and how exceptions
// leave a parallel region. An exception must never escape an OpenMP block (the
// runtime terminates the program), so each thread's work runs inside
// ParallelErrors::run, which keeps the first exception; the caller rethrows it
// after the region, as faiss does.
#pragma once

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <utility>

namespace posvec::detail {

// `requested` threads, or all cores for 0 (at least 1).
inline int resolveThreads(int requested) {
  return requested > 0 ? requested : std::max(1, omp_get_max_threads());
}

class ParallelErrors {
 public:
  // Runs `work`; an exception it throws is kept (the first one wins) instead of
  // leaving the parallel region. Safe to call from every thread at once.
  template <typename F>
  void run(F&& work) noexcept {
    try {
      std::forward<F>(work)();
    } catch (...) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!first_) first_ = std::current_exception();
      failed_.store(true, std::memory_order_relaxed);
    }
  }
  // True once any thread has failed: long loops poll it to stop early.
  bool failed() const { return failed_.load(std::memory_order_relaxed); }
  // After the region: rethrows the first exception, if any.
  void rethrow() const {
    if (first_) std::rethrow_exception(first_);
  }

 private:
  std::mutex mutex_;
  std::exception_ptr first_;
  std::atomic<bool> failed_{false};
};

}  // namespace posvec::detail
