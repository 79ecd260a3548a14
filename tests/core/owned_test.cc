#include "core/owned.h"

#include <gtest/gtest.h>

#include <utility>
#include <vector>

namespace infercost {
namespace {

// A resource that records which of its ids were released, in order.
struct Counted {
  int id = -1;
  std::vector<int>* released = nullptr;
  bool held() const { return id >= 0; }
  void release() { released->push_back(id); }
};

TEST(Owned, ReleasesOnceWhenDestroyed) {
  std::vector<int> released;
  {
    Owned<Counted> owner(Counted{1, &released});
    EXPECT_TRUE(owner->held());
    EXPECT_TRUE(released.empty());
  }
  EXPECT_EQ(released, std::vector<int>{1});
  { Owned<Counted> empty; }
  EXPECT_EQ(released, std::vector<int>{1});
}

TEST(Owned, MoveConstructionLeavesTheSourceEmpty) {
  std::vector<int> released;
  {
    Owned<Counted> from(Counted{1, &released});
    Owned<Counted> to(std::move(from));
    EXPECT_FALSE(from->held());  // NOLINT(bugprone-use-after-move): a moved-from owner holds nothing
    EXPECT_EQ(to->id, 1);
    EXPECT_TRUE(released.empty());
  }
  // The moved-from owner's destruction released nothing: 1 once, by `to`.
  EXPECT_EQ(released, std::vector<int>{1});
}

TEST(Owned, MoveAssignmentReleasesTheOldResourceOnce) {
  std::vector<int> released;
  {
    Owned<Counted> a(Counted{1, &released});
    Owned<Counted> b(Counted{2, &released});
    a = std::move(b);
    EXPECT_EQ(released, std::vector<int>{1});
    EXPECT_EQ(a->id, 2);
    EXPECT_FALSE(b->held());  // NOLINT(bugprone-use-after-move)
    // Assigning an empty owner releases what was held.
    Owned<Counted> empty;
    a = std::move(empty);
    EXPECT_EQ(released, (std::vector<int>{1, 2}));
    EXPECT_FALSE(a->held());
  }
  EXPECT_EQ(released, (std::vector<int>{1, 2}));
}

TEST(Owned, SelfMoveAssignmentKeepsTheResource) {
  std::vector<int> released;
  {
    Owned<Counted> owner(Counted{1, &released});
    Owned<Counted>& same = owner;
    owner = std::move(same);
    EXPECT_TRUE(released.empty());
    EXPECT_EQ(owner->id, 1);
  }
  EXPECT_EQ(released, std::vector<int>{1});
}

TEST(Owned, ResetReleasesOnceAndLeavesNothingHeld) {
  std::vector<int> released;
  {
    Owned<Counted> owner(Counted{1, &released});
    owner.reset();
    EXPECT_EQ(released, std::vector<int>{1});
    EXPECT_FALSE(owner->held());
    owner.reset();
    EXPECT_EQ(released, std::vector<int>{1});
  }
  EXPECT_EQ(released, std::vector<int>{1});
}

}  // namespace
}  // namespace infercost
