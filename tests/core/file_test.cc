#include "core/file.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <thread>

#include "test_utils.h"

namespace infercost {
namespace {

using testing::count_entries;
using testing::slurp;
using testing::TempDir;

// Forks a child that installs the signal cleanup, runs `prepare` (0, or an
// exit code naming what failed; what it makes must outlive it) and raises
// SIGTERM; expects the child to die of that signal.
void expect_child_dies_of_sigterm(const std::function<int()>& prepare) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    install_temporary_cleanup_on_signals();
    const int failed = prepare();
    if (failed != 0) ::_exit(failed);
    std::raise(SIGTERM);
    ::_exit(11);  // not reached: the handler re-raises with the default action
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exit status " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGTERM);
}

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

// A run killed with SIGKILL leaves "<out>.tmp-<pid>"; the next output to the
// same path removes it, but never the temporary of a process still alive, nor
// another output's.
// What an output path names decides how it is written: files beside and
// renamed, streams in place; links followed; protected things refused.
TEST(File, OutputTargetsFollowLinksAndTellStreamsFromFiles) {
  TempDir dir;
  auto file = resolve_output_target(dir.file("new.jsonl"));
  ASSERT_TRUE(file.ok()) << file.status().to_string();
  EXPECT_EQ(file->kind, OutputTarget::Kind::kFile);
  EXPECT_EQ(file->path, dir.file("new.jsonl"));
  // A chain of links, relative and absolute, to a file not there yet.
  std::filesystem::create_directories(dir.file("real"));
  std::filesystem::create_symlink("real/target", dir.file("a"));
  std::filesystem::create_symlink(dir.file("a"), dir.file("b"));
  auto linked = resolve_output_target(dir.file("b"));
  ASSERT_TRUE(linked.ok()) << linked.status().to_string();
  EXPECT_EQ(linked->kind, OutputTarget::Kind::kFile);
  EXPECT_EQ(linked->path, dir.file("real/target"));
  std::filesystem::create_symlink("loop2", dir.file("loop1"));
  std::filesystem::create_symlink("loop1", dir.file("loop2"));
  auto loop = resolve_output_target(dir.file("loop1"));
  ASSERT_FALSE(loop.ok());
  EXPECT_NE(loop.status().message().find("too many levels of symbolic links"), std::string::npos);
  // Streams: a FIFO, a character device (only looked at), descriptors by name.
  ASSERT_EQ(::mkfifo(dir.file("fifo").c_str(), 0600), 0);
  auto fifo = resolve_output_target(dir.file("fifo"));
  ASSERT_TRUE(fifo.ok());
  EXPECT_EQ(fifo->kind, OutputTarget::Kind::kStream);
  EXPECT_EQ(fifo->what, "a FIFO");
  auto null = resolve_output_target("/dev/null");
  ASSERT_TRUE(null.ok());
  EXPECT_EQ(null->kind, OutputTarget::Kind::kStream);
  EXPECT_EQ(null->what, "a character device");
  for (const char* name : {"/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"}) {
    auto fd = resolve_output_target(name);
    ASSERT_TRUE(fd.ok()) << name << ": " << fd.status().to_string();
    EXPECT_EQ(fd->kind, OutputTarget::Kind::kStream) << name;
    EXPECT_EQ(fd->descriptor, 1) << name;
  }
  EXPECT_EQ(resolve_output_target("/dev/stderr")->descriptor, 2);
  // Refused: a folder, a read-only file (whoever runs it), a descriptor not open.
  EXPECT_EQ(resolve_output_target(dir.path()).status().code(), StatusCode::kInvalidArgument);
  std::ofstream(dir.file("ro")) << "x";
  std::filesystem::permissions(dir.file("ro"), std::filesystem::perms::owner_read);
  auto ro = resolve_output_target(dir.file("ro"));
  ASSERT_FALSE(ro.ok());
  EXPECT_NE(ro.status().message().find("the file is read-only (mode 0400)"), std::string::npos)
      << ro.status().message();
  EXPECT_EQ(resolve_output_target("/dev/fd/987654").status().code(), StatusCode::kInvalidArgument);
}

// A FIFO is written in place as bytes come: no temporary beside it, and
// commit() only flushes; a replaced file keeps its mode.
TEST(File, StreamsAreWrittenInPlaceAndFilesKeepTheirMode) {
  TempDir dir;
  const std::string fifo = dir.file("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  testing::FifoReader reader(fifo);
  {
    auto out = AtomicOutputFile::create(fifo);  // an ASSERT's return leaves the reader to its destructor
    ASSERT_TRUE(out.ok()) << out.status().to_string();
    EXPECT_TRUE(out->stream());
    EXPECT_EQ(count_entries(dir.path()), 1);
    ASSERT_TRUE(out->write("rows\n").ok());
    ASSERT_TRUE(out->sync().ok());
    ASSERT_TRUE(out->commit().ok());
  }
  EXPECT_EQ(reader.finish(), "rows\n");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));

  const std::string kept = dir.file("kept");
  std::ofstream(kept) << "old";
  std::filesystem::permissions(kept, std::filesystem::perms::owner_read |
                                         std::filesystem::perms::owner_write |
                                         std::filesystem::perms::group_read);
  auto out = AtomicOutputFile::create(kept);
  ASSERT_TRUE(out.ok());
  EXPECT_FALSE(out->stream());
  ASSERT_TRUE(out->write("new").ok());
  ASSERT_TRUE(out->commit().ok());
  EXPECT_EQ(slurp(kept), "new");
  ASSERT_EQ(::stat(kept.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST(File, CreateRemovesStaleTemporariesOfDeadProcessesOnly) {
  TempDir dir;
  const pid_t dead = ::fork();
  ASSERT_GE(dead, 0);
  if (dead == 0) ::_exit(0);
  int status = 0;
  ASSERT_EQ(::waitpid(dead, &status, 0), dead);  // reaped: the pid names no process now
  const pid_t alive = ::fork();
  ASSERT_GE(alive, 0);
  if (alive == 0) {
    ::pause();
    ::_exit(0);
  }
  const std::string p = dir.file("out.jsonl");
  const std::string stale = dir.write("out.jsonl.tmp-" + std::to_string(dead), "half");
  const std::string live = dir.write("out.jsonl.tmp-" + std::to_string(alive), "busy");
  const std::string other = dir.write("other.jsonl.tmp-" + std::to_string(dead), "not ours");
  const std::string odd = dir.write("out.jsonl.tmp-12x", "not a pid");
  {
    auto f = AtomicOutputFile::create(p);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(f->write("done").ok());
    ASSERT_TRUE(f->commit().ok());
  }
  ::kill(alive, SIGKILL);
  ASSERT_EQ(::waitpid(alive, &status, 0), alive);
  EXPECT_FALSE(path_exists(stale)) << "a dead run's temporary stays";
  EXPECT_TRUE(path_exists(live)) << "a live process's temporary was removed";
  EXPECT_TRUE(path_exists(other));
  EXPECT_TRUE(path_exists(odd));
  EXPECT_EQ(slurp(p), "done");
  // Now the second one is stale too.
  EXPECT_EQ(remove_stale_temporaries(p), 1);
  EXPECT_FALSE(path_exists(live));
}

// A resumable output outlives its writer: cut back to what was durable and
// continued, it is renamed into place on commit; discard() removes it.
TEST(File, ResumableOutputIsKeptCutBackAndContinued) {
  TempDir dir;
  const std::string path = dir.file("out.jsonl"), partial = dir.file("out.jsonl.partial");
  uint64_t durable = 0;
  {
    auto f = AtomicOutputFile::open_resumable(path, partial, 0);
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    ASSERT_TRUE(f->write("row 1\nrow 2\n").ok());
    ASSERT_TRUE(f->sync().ok());
    durable = f->bytes_written();
    ASSERT_TRUE(f->write("row 3, never made durable").ok());
  }  // destroyed uncommitted: the partial stays
  EXPECT_FALSE(path_exists(path));
  ASSERT_TRUE(path_exists(partial));
  EXPECT_EQ(durable, 12u);
  auto shorter = AtomicOutputFile::open_resumable(path, partial, 1000);
  ASSERT_FALSE(shorter.ok());
  EXPECT_EQ(shorter.status().code(), StatusCode::kCorruption);
  EXPECT_EQ(AtomicOutputFile::open_resumable(path, dir.file("missing"), 5).status().code(),
            StatusCode::kNotFound);
  {
    auto f = AtomicOutputFile::open_resumable(path, partial, durable);
    ASSERT_TRUE(f.ok()) << f.status().to_string();
    EXPECT_EQ(f->bytes_written(), durable);
    ASSERT_TRUE(f->write("row 3\n").ok());
    ASSERT_TRUE(f->commit().ok());
  }
  EXPECT_EQ(slurp(path), "row 1\nrow 2\nrow 3\n");
  EXPECT_FALSE(path_exists(partial));
  {
    auto f = AtomicOutputFile::open_resumable(dir.file("other"), partial, 0);
    ASSERT_TRUE(f.ok());
    ASSERT_TRUE(f->write("x").ok());
    f->discard();
  }
  EXPECT_FALSE(path_exists(partial));
}

TEST(File, SignalRemovesTemporaries) {
  TempDir dir;
  const std::string p = dir.file("out.txt");
  expect_child_dies_of_sigterm([&] {
    // Leaked on purpose: alive when the signal comes.
    auto* a = new Result<AtomicOutputFile>(AtomicOutputFile::create(p));
    new Result<AtomicOutputFile>(AtomicOutputFile::create(dir.file("other.txt")));
    auto* moved = new AtomicOutputFile(std::move(**a));  // the moved-to file is still tracked
    return moved->write("partial").ok() && count_entries(dir.path()) == 2 ? 0 : 10;
  });
  EXPECT_EQ(count_entries(dir.path()), 0);
}

TEST(File, ReadsProcFilesWhole) {
  // /proc files report size 0: they are read to their end all the same.
  Result<std::string> status = read_file("/proc/self/status");
  ASSERT_TRUE(status.ok()) << status.status().to_string();
  EXPECT_NE(status->find("\nVmRSS:"), std::string::npos) << *status;
  EXPECT_NE(status->find("\nThreads:"), std::string::npos) << *status;
  Result<std::string> stat = read_file("/proc/self/stat");
  ASSERT_TRUE(stat.ok());
  EXPECT_EQ(stat->rfind(std::to_string(::getpid()) + " (", 0), 0u) << *stat;
  // A regular file larger than the first read buffer.
  TempDir dir;
  const std::string big(100000, 'x');
  EXPECT_EQ(*read_file(dir.write("big.txt", big)), big);
}

// A folder tree under `root` wide enough that getdents64 needs several calls
// and deep enough for recursion; returns the number of files made.
int fill_tree(const std::string& root) {
  int files = 0;
  std::string dir = root;
  for (int depth = 0; depth < 3; ++depth) {
    for (int i = 0; i < 150; ++i) {
      std::ofstream(dir + "/file-with-a-longish-name-" + std::to_string(i) + ".txt") << "partial";
      ++files;
    }
    dir += "/sub";
    std::filesystem::create_directory(dir);
  }
  return files;
}

TEST(File, TempDirIsRemovedWhenItGoesOutOfScope) {
  TempDir base;
  ::setenv("TMPDIR", base.path().c_str(), 1);
  std::string path;
  {
    Result<infercost::TempDir> made = infercost::TempDir::create("infercost-test-tmp-");
    ::unsetenv("TMPDIR");
    ASSERT_TRUE(made.ok()) << made.status().to_string();
    path = made->path();
    EXPECT_EQ(path.rfind(base.path() + "/infercost-test-tmp-", 0), 0u) << path;
    EXPECT_GT(fill_tree(path), 0);
    infercost::TempDir moved = std::move(*made);  // the moved-to folder owns it
    EXPECT_TRUE(made->path().empty());
    EXPECT_TRUE(path_exists(path));
  }
  EXPECT_FALSE(path_exists(path));
  EXPECT_EQ(count_entries(base.path()), 0);
  ::setenv("TMPDIR", (base.path() + "/missing").c_str(), 1);
  Result<infercost::TempDir> failed = infercost::TempDir::create("x-");
  ::unsetenv("TMPDIR");
  ASSERT_FALSE(failed.ok());
  EXPECT_NE(failed.status().message().find(base.path() + "/missing/x-"), std::string::npos)
      << failed.status().message();
}

TEST(File, SignalRemovesTempDirsAndStopsTrackedChildren) {
  TempDir base;
  const std::string pid_file = base.file("grandchild.pid");
  expect_child_dies_of_sigterm([&] {
    ::setenv("TMPDIR", base.path().c_str(), 1);
    Result<infercost::TempDir> tmp = infercost::TempDir::create("infercost-test-tmp-");
    if (!tmp.ok() || fill_tree(tmp->path()) == 0) return 10;
    new infercost::TempDir(std::move(*tmp));  // leaked on purpose: alive when the signal comes
    // A process of its own that would outlive this one without the cleanup:
    // it never ends by itself (however late the check below comes).
    const pid_t grandchild = ::fork();
    if (grandchild < 0) return 12;
    if (grandchild == 0) {
      ::execl("/bin/sleep", "sleep", "infinity", static_cast<char*>(nullptr));
      ::_exit(13);
    }
    track_child_process(grandchild);
    std::ofstream(pid_file) << grandchild;
    return 0;
  });
  const pid_t grandchild = std::atoi(slurp(pid_file).c_str());
  ASSERT_GT(grandchild, 0);
  // Reaped by the handler: no such process any more.
  const int alive = ::kill(grandchild, 0);
  const int error = errno;
  EXPECT_EQ(alive, -1);
  EXPECT_EQ(error, ESRCH);
  if (alive == 0) ::kill(grandchild, SIGKILL);  // the cleanup failed: not left running
  ::unlink(pid_file.c_str());
  EXPECT_EQ(count_entries(base.path()), 0);
}

TEST(File, WaitChildProcessUntracksWhatItReaps) {
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(7);
  track_child_process(child);
  int status = 0;
  ASSERT_EQ(wait_child_process(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 7);
  EXPECT_EQ(wait_child_process(child, &status, WNOHANG), -1);
  EXPECT_EQ(errno, ECHILD);
}

}  // namespace
}  // namespace infercost
