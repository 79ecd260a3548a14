// A resource held by value and let go exactly once: when its owner is
// destroyed or given another one, or by reset(). Moved, never copied; a
// moved-from owner holds nothing. `Resource` is a struct whose default value
// holds nothing, with held() and release():
//
//   struct LockFile {
//     int fd = -1;
//     bool held() const { return fd >= 0; }
//     void release();
//   };
//   class JobLock { Owned<LockFile> lock_; };  // movable, not copyable: no special members of its own
#pragma once

#include <utility>

namespace infercost {

template <typename Resource>
class Owned {
 public:
  Owned() = default;
  explicit Owned(Resource resource) : held_(std::move(resource)) {}
  Owned(Owned&& other) noexcept : held_(std::exchange(other.held_, Resource{})) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      held_ = std::exchange(other.held_, Resource{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }

  // Lets the resource go now, where one is held; the owner then holds nothing.
  void reset() {
    if (held_.held()) held_.release();
    held_ = Resource{};
  }
  const Resource* operator->() const { return &held_; }

 private:
  Resource held_;
};

}  // namespace infercost
