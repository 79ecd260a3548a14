#include "infercost/core/file.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>

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

TEST(File, SignalRemovesTemporaries) {
  TempDir dir;
  const std::string p = dir.file("out.txt");
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    install_temporary_cleanup_on_signals();
    auto a = AtomicOutputFile::create(p);
    auto b = AtomicOutputFile::create(dir.file("other.txt"));
    AtomicOutputFile moved = std::move(*a);  // the moved-to file is still tracked
    if (!moved.write("partial").ok() || count_entries(dir.path()) != 2) ::_exit(10);
    std::raise(SIGTERM);
    ::_exit(11);  // not reached: the handler re-raises with the default action
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
  EXPECT_EQ(count_entries(dir.path()), 0);
}

}  // namespace
}  // namespace infercost
