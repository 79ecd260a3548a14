// A blocking FIFO of at most `capacity` items, joining two pipeline stages.
//
// Thread safety: any number of producers and consumers. push() blocks while
// the queue is full, pop() while it is empty and still open. close() ends the
// stream: pushes fail, pops drain what is left and then return nullopt.
// cancel() (an error elsewhere) wakes every waiter at once: pushes fail and
// pops return nullopt immediately, dropping what is queued.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>

#include "run/engine.h"

namespace infercost::run {

template <typename T>
class BoundedQueue {
 public:
  explicit BoundedQueue(size_t capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  BoundedQueue(const BoundedQueue&) = delete;
  BoundedQueue& operator=(const BoundedQueue&) = delete;

  // False (and `item` dropped) when the queue was closed or cancelled.
  bool push(T item) {
    std::unique_lock<std::mutex> lock(mu_);
    const auto can_push = [this] { return items_.size() < capacity_ || closed_ || cancelled_; };
    if (!can_push()) {
      ++waiting_producers_;
      not_full_.wait(lock, can_push);
      --waiting_producers_;
    }
    if (closed_ || cancelled_) return false;
    items_.push_back(std::move(item));
    not_empty_.notify_one();
    return true;
  }

  // The oldest item; nullopt once closed and drained, or cancelled.
  std::optional<T> pop() {
    std::unique_lock<std::mutex> lock(mu_);
    const auto can_pop = [this] { return !items_.empty() || closed_ || cancelled_; };
    if (!can_pop()) {
      ++waiting_consumers_;
      not_empty_.wait(lock, can_pop);
      --waiting_consumers_;
    }
    if (cancelled_ || items_.empty()) return std::nullopt;
    std::optional<T> item(std::move(items_.front()));
    items_.pop_front();
    not_full_.notify_one();
    return item;
  }

  void close() {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  void cancel() {
    std::lock_guard<std::mutex> lock(mu_);
    cancelled_ = true;
    items_.clear();
    not_empty_.notify_all();
    not_full_.notify_all();
  }

  size_t size() const {
    std::lock_guard<std::mutex> lock(mu_);
    return items_.size();
  }
  size_t capacity() const { return capacity_; }
  // push() and pop() calls waiting now (for room, for an item): what a test
  // waits for before it wakes them.
  size_t waiting_producers() const {
    std::lock_guard<std::mutex> lock(mu_);
    return waiting_producers_;
  }
  size_t waiting_consumers() const {
    std::lock_guard<std::mutex> lock(mu_);
    return waiting_consumers_;
  }

 private:
  const size_t capacity_;
  mutable std::mutex mu_;
  std::condition_variable not_full_, not_empty_;
  std::deque<T> items_;
  size_t waiting_producers_ = 0, waiting_consumers_ = 0;
  bool closed_ = false;
  bool cancelled_ = false;
};

}  // namespace infercost::run
