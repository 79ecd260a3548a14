#include "infercost/core/file.h"

#include <gtest/gtest.h>

#include "test_utils.h"

namespace infercost {
namespace {

using testing::count_entries;
using testing::slurp;
using testing::TempDir;

TEST(File, ReadAndMap) {
  TempDir dir;
  std::string p = dir.write("a.txt", "hello");
  EXPECT_EQ(*read_file(p), "hello");
  auto m = MappedFile::open(p);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->view(), "hello");
  auto empty = MappedFile::open(dir.write("e.txt", ""));
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0u);
  EXPECT_EQ(read_file(dir.file("missing")).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(read_file(dir.path()).status().code(), StatusCode::kInvalidArgument);
}

TEST(File, AtomicOutputAppearsOnlyOnCommit) {
  TempDir dir;
  std::string p = dir.file("out.txt");
  {
    auto f = AtomicOutputFile::create(p);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(f->write("partial").ok());
    EXPECT_FALSE(path_exists(p));
  }
  EXPECT_EQ(count_entries(dir.path()), 0);
  auto f = AtomicOutputFile::create(p);
  ASSERT_TRUE(f.ok());
  ASSERT_TRUE(f->write("done").ok());
  ASSERT_TRUE(f->commit().ok());
  EXPECT_EQ(slurp(p), "done");
  EXPECT_EQ(count_entries(dir.path()), 1);
  EXPECT_FALSE(f->write("more").ok());
}

}  // namespace
}  // namespace infercost
