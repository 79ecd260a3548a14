// Files: whole-file reads, read-only memory maps, output files that appear
// only when complete (written to a temporary beside the target, renamed on
// commit, removed if never committed), and temporary folders. Temporaries of
// both kinds are also removed when SIGINT, SIGTERM or SIGHUP ends the program
// (install_temporary_cleanup_on_signals()).
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <memory>
#include <string>
#include <string_view>

#include "core/owned.h"
#include "infercost/status.h"

namespace infercost {

// Reads a whole file, up to its end: files whose size stat() does not know
// (those of /proc report 0) are read whole too. Errors name the path and the
// OS reason.
Result<std::string> read_file(const std::string& path);

// A read-only mapping of a whole file. Move-only; unmaps on destruction.
// Views into data() are valid while the MappedFile lives.
class MappedFile {
 public:
  static Result<MappedFile> open(const std::string& path);

  const unsigned char* data() const { return map_->data; }
  size_t size() const { return map_->size; }
  std::string_view view() const { return {reinterpret_cast<const char*>(map_->data), map_->size}; }
  const std::string& path() const { return path_; }

 private:
  // `size` bytes mapped at `data` (none for an empty file); munmap on release.
  struct Mapping {
    const unsigned char* data = nullptr;
    size_t size = 0;
    bool held() const { return data != nullptr; }
    void release();
  };
  Owned<Mapping> map_;
  std::string path_;
};

// Removes the temporaries "<path>.tmp-<pid>" that AtomicOutputFiles of
// processes no longer alive left (a run killed with SIGKILL); never those of a
// live process. Returns how many it removed.
int remove_stale_temporaries(const std::string& path);

// What an output path names, its symbolic links followed: where the bytes of
// an output go and how they get there.
struct OutputTarget {
  enum class Kind {
    // A regular file, or nothing yet: written to a temporary beside `path`
    // and renamed over it once complete (an existing file's mode is kept).
    kFile,
    // A character device (/dev/null, a terminal), a FIFO, or a file
    // descriptor by name (/dev/stdout, /dev/fd/N, /proc/self/fd/N): written
    // in place as the bytes come; nothing to rename, nothing to resume.
    kStream,
  };
  Kind kind = Kind::kFile;
  // Where the bytes go: the path given, or the file its links lead to.
  std::string path;
  // kStream: what it is, for messages ("a character device", "a FIFO",
  // "file descriptor 1").
  std::string what;
  // kStream of a descriptor of this process (/dev/stdout, /dev/fd/N,
  // /proc/self/fd/N): that descriptor, written through a dup() of it so
  // its offset and flags are the ones the caller set up (>> appends).
  int descriptor = -1;
};

// Follows `path`'s symbolic links (also one that points to nothing yet: the
// file it names is created) and says how to write there. kInvalidArgument
// naming the path for a folder, a block device, a socket, a link loop, and a
// regular file that is read-only (no write permission bit, even for root, or
// one the OS refuses): infercost never replaces a file its owner protected.
Result<OutputTarget> resolve_output_target(const std::string& path);

// Buffered writer of an output. For a regular file (resolve_output_target):
// to "<file>.tmp-<pid>" beside the file the path leads to; commit() flushes,
// fsyncs and renames it over that file. Destroying an uncommitted file
// removes the temporary, so a failed run leaves no partial output behind;
// after install_temporary_cleanup_on_signals() so does SIGINT, SIGTERM or
// SIGHUP. create() first removes the stale temporaries of that file
// (remove_stale_temporaries). For a stream (a device, a FIFO, /dev/stdout)
// the bytes are written in place and commit() flushes them: what was written
// cannot be taken back. Not thread-safe.
class AtomicOutputFile {
 public:
  static Result<AtomicOutputFile> create(const std::string& path);
  // A resumable output: written to `partial` (a stable name beside `path`)
  // that outlives this object, abandon() and signals, so that a later run
  // can continue it; commit() renames it to `path` as create()'s does.
  // resume_bytes 0 starts a new partial file; otherwise the existing one is
  // cut to resume_bytes (kCorruption naming it when it is shorter, kNotFound
  // when it is missing) and written on from there.
  static Result<AtomicOutputFile> open_resumable(const std::string& path, const std::string& partial,
                                                 uint64_t resume_bytes);
  AtomicOutputFile() = default;
  AtomicOutputFile(AtomicOutputFile&& other) noexcept;
  AtomicOutputFile& operator=(AtomicOutputFile&& other) noexcept;
  AtomicOutputFile(const AtomicOutputFile&) = delete;
  AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;
  ~AtomicOutputFile();

  Status write(std::string_view bytes);
  // Hands the bytes written so far to the OS (out of this process's buffer)
  // without closing; kIOError naming the path.
  Status flush();
  // flush(), then fsync: every byte written so far is durable.
  Status sync();
  // Bytes written so far (the size the file has once flushed).
  uint64_t bytes_written() const { return bytes_; }
  Status commit();
  // Closes without renaming and removes the temporary; a resumable file's
  // partial is kept (discard() removes it). Safe to call twice.
  void abandon();
  // Closes without renaming and removes the temporary, resumable or not.
  void discard();
  const std::string& path() const { return path_; }
  // Written in place (OutputTarget::Kind::kStream): nothing to rename or remove.
  bool stream() const { return stream_; }

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
  uint64_t bytes_ = 0;
  bool keep_ = false;  // resumable: abandon() keeps the partial file
  bool stream_ = false;
  // Heap-owned so its address survives moves: the signal handler reads it.
  std::unique_ptr<char[]> tmp_path_;
};

// A fresh folder "<$TMPDIR, else /tmp>/<prefix>XXXXXX" (mkdtemp), removed with
// everything in it on destruction, by remove(), and, after
// install_temporary_cleanup_on_signals(), on SIGINT, SIGTERM or SIGHUP.
// Move-only. Not thread-safe.
class TempDir {
 public:
  // kIOError naming the folder when it cannot be made.
  static Result<TempDir> create(const std::string& prefix);

  // Removes the folder and its contents now; safe to call twice.
  void remove() { folder_.reset(); }
  const std::string& path() const { return folder_->path; }

 private:
  // The folder, removed with its contents on release, and its path as the
  // signal handler reads it (heap-owned so that its address survives moves).
  struct Folder {
    std::string path;
    std::unique_ptr<char[]> tracked;
    bool held() const { return !path.empty(); }
    void release();
  };
  Owned<Folder> folder_;
};

// Installs handlers for SIGINT, SIGTERM and SIGHUP that first stop the
// tracked child processes (below), then remove the temporaries of all live
// AtomicOutputFiles (at most 64 at once) and TempDirs (at most 16), then die
// of the signal as before. Call once from main().
void install_temporary_cleanup_on_signals();

// While set, the first SIGINT or SIGTERM does not end the program: it is
// stored in *signal_seen (which must be 0, and lock-free) for the program to
// stop at its next durable step; a second one removes the temporaries and
// dies as above. SIGHUP always does. nullptr restores the default.
void stop_gracefully_on_signals(std::atomic<int>* signal_seen);

// Child processes (at most 16 at once) that the signal cleanup stops before
// it removes temporaries, so that none goes on writing into a folder being
// removed: each gets SIGTERM, then SIGKILL if it has not ended within 2 s,
// and is reaped. Reap a tracked child with wait_child_process().
void track_child_process(pid_t pid);
void untrack_child_process(pid_t pid);
// waitpid(pid, status, options) with SIGINT, SIGTERM and SIGHUP blocked, and
// `pid` untracked when it is reaped: the signal cleanup never signals a pid
// that may have been reused. Returns what waitpid returns (errno set on -1).
// Signals wait while it blocks: use WNOHANG unless the child has been killed.
pid_t wait_child_process(pid_t pid, int* status, int options);

// fsyncs the folder holding `path`, so that a rename or a new file in it
// survives a crash of the machine; best effort (errors are ignored).
void sync_parent_folder(const std::string& path);

// True when `path` names an existing regular file or directory.
bool path_exists(const std::string& path);

}  // namespace infercost
