#include "run/bounded_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <thread>

namespace infercost::run {
namespace {

// Until `done()` holds. Each condition below also holds once the thread it
// watches has returned, so only a thread that hangs makes this wait forever
// (ctest's TIMEOUT then).
template <typename F>
void wait_until(F done) {
  while (!done()) std::this_thread::yield();
}

// Whether `f` has its value, without waiting.
template <typename T>
bool ready(const std::future<T>& f) {
  return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
}

// How long a woken thread may take to finish before the test calls it stuck:
// a guard against a hang, not a measure of speed.
constexpr std::chrono::minutes kStuck{5};

TEST(BoundedQueue, ProducerBlocksWhileFull) {
  BoundedQueue<int> q(2);
  ASSERT_TRUE(q.push(1));
  ASSERT_TRUE(q.push(2));
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    EXPECT_TRUE(q.push(3));
    pushed = true;
  });
  wait_until([&] { return q.waiting_producers() == 1 || pushed.load(); });
  EXPECT_FALSE(pushed.load());  // full: the third push waits
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.pop(), 1);
  producer.join();
  EXPECT_TRUE(pushed.load());
  EXPECT_EQ(q.pop(), 2);
  EXPECT_EQ(q.pop(), 3);
}

TEST(BoundedQueue, CloseDrainsThenEnds) {
  BoundedQueue<int> q(4);
  ASSERT_TRUE(q.push(7));
  ASSERT_TRUE(q.push(8));
  q.close();
  EXPECT_FALSE(q.push(9));
  EXPECT_EQ(q.pop(), 7);
  EXPECT_EQ(q.pop(), 8);
  EXPECT_EQ(q.pop(), std::nullopt);
}

TEST(BoundedQueue, CloseWakesAWaitingConsumer) {
  BoundedQueue<int> q(1);
  auto consumer = std::async(std::launch::async, [&] { return q.pop(); });
  // Empty: the pop waits.
  wait_until([&] { return q.waiting_consumers() == 1 || ready(consumer); });
  EXPECT_EQ(q.waiting_consumers(), 1u);
  q.close();
  ASSERT_EQ(consumer.wait_for(kStuck), std::future_status::ready);
  EXPECT_EQ(q.waiting_consumers(), 0u);
  EXPECT_EQ(consumer.get(), std::nullopt);
}

TEST(BoundedQueue, CancelWakesProducersAndConsumers) {
  BoundedQueue<int> full(1), empty(1);
  ASSERT_TRUE(full.push(1));
  auto producer = std::async(std::launch::async, [&] { return full.push(2); });
  auto consumer = std::async(std::launch::async, [&] { return empty.pop(); });
  wait_until([&] { return full.waiting_producers() == 1 || ready(producer); });
  wait_until([&] { return empty.waiting_consumers() == 1 || ready(consumer); });
  EXPECT_EQ(full.waiting_producers(), 1u);
  EXPECT_EQ(empty.waiting_consumers(), 1u);
  full.cancel();
  empty.cancel();
  ASSERT_EQ(producer.wait_for(kStuck), std::future_status::ready);
  ASSERT_EQ(consumer.wait_for(kStuck), std::future_status::ready);
  EXPECT_FALSE(producer.get());
  EXPECT_EQ(consumer.get(), std::nullopt);
  EXPECT_EQ(full.pop(), std::nullopt);  // queued items are dropped
}

TEST(BoundedQueue, ManyProducersOneConsumerLoseNothing) {
  BoundedQueue<int> q(3);
  std::vector<std::thread> producers;
  for (int p = 0; p < 3; ++p) {
    producers.emplace_back([&q, p] {
      for (int i = 0; i < 200; ++i) q.push(p * 1000 + i);
    });
  }
  std::thread closer([&] {
    for (auto& t : producers) t.join();
    q.close();
  });
  int64_t sum = 0, count = 0;
  while (std::optional<int> v = q.pop()) {
    sum += *v;
    ++count;
  }
  closer.join();
  EXPECT_EQ(count, 600);
  EXPECT_EQ(sum, 3 * (199 * 200 / 2) + 200 * (0 + 1000 + 2000));
}

}  // namespace
}  // namespace infercost::run
