// Resumable runs: the checkpoint a run with an output file or folder keeps
// beside its output, and the files that go with it (docs/checkpoint.md).
//
// A checkpoint says what the job is (the inputs, the model and every option
// that changes the output) and how far it has got: the inputs whose rows are
// all durably written, where reading continues in the next one, and where
// the output in progress stands (its durable bytes and, for Parquet, the
// footer of its complete row groups). It is written atomically (a temporary,
// fsync, rename, fsync of the folder), only after the output it describes
// has been fsynced, so a crash at any moment leaves a checkpoint that is
// true of the files beside it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/owned.h"
#include "infercost/status.h"
#include "io/prediction_writer.h"
#include "io/row_source.h"
#include "run/engine.h"

namespace infercost::run {

// The format's name and major version; readers refuse other majors.
inline constexpr const char* kCheckpointSchema = "infercost.checkpoint/1";

struct JobInput {
  std::string path;
  std::string format;  // io::input_format_name
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  // SHA-256 of the size and the first and last 64 KiB (the whole file when
  // smaller): a file rewritten in place with the same size and mtime is
  // still told apart where it changed at either end.
  std::string head_tail_sha256;
};

// The option that names the command of a job other than `infercost run`
// ("embed"); a run's identity has none, as before embeddings.
inline constexpr std::string_view kJobCommandOption = "command";

// What a resumed run must match. `options` are the settings that change the
// output, as (name, value) pairs in a fixed order.
struct JobIdentity {
  std::vector<JobInput> inputs;
  std::string model_dir;
  std::string model_files_sha256;  // config and tokenizer files, whole
  uint64_t weights_size = 0;
  int64_t weights_mtime_ns = 0;
  std::string weights_head_tail_sha256;
  std::vector<std::pair<std::string, std::string>> options;
};

struct JobProgress {
  // Inputs whose rows are all durably in the output (for a folder output,
  // their parts are renamed into place).
  int64_t files_done = 0;
  // In input `files_done`: where reading continues.
  io::SourcePosition position;
  // Input rows accounted for, all files: written (null rows included) or
  // skipped as bad.
  int64_t rows_done = 0;
  int64_t rows_null = 0;
  int64_t rows_skipped = 0;
  std::string first_skip_reason;
  // The output in progress: the single output file, or the part of input
  // `files_done` (a folder output; none between two parts).
  io::OutputCheckpoint output;
  // The precision the backends resolved "auto" to, so a resume on another
  // machine cannot mix precisions in one output.
  std::string precision;
};

struct Checkpoint {
  JobIdentity job;
  JobProgress progress;
  std::string updated;     // UTC, ISO 8601
  std::string written_by;  // "infercost <version>"
};

std::string checkpoint_json(const Checkpoint& checkpoint);
// kCorruption naming `origin` and the field for anything missing, mistyped
// or of another major version.
Result<Checkpoint> parse_checkpoint(std::string_view json, const std::string& origin);

// The first way `now` differs from `then`, in words (the command first: "the
// checkpoint is `infercost embed`'s, this is `infercost run`"; "input 2
// (b.jsonl): its size changed (100 -> 120 bytes)", "--max-length: '128'
// now, the checkpoint's run used '512'"); "" when they are the same job.
// `then_is` names `then` in the words ("checkpoint": the checkpoint's run;
// "record": the finished job's record).
std::string identity_difference(const JobIdentity& then, const JobIdentity& now,
                                std::string_view then_is = "checkpoint");

// The schema of a finished job's record; readers refuse other majors.
inline constexpr const char* kJobRecordSchema = "infercost.job/1";

// What a finished job leaves beside its output (JobFiles::record): the job,
// how it ended, and each output file as it was then, so that a later run on
// the same output knows whose rows it holds (docs/checkpoint.md).
struct JobRecord {
  JobIdentity job;
  JobProgress progress;  // as at the end: rows_done, rows_null, rows_skipped, precision
  // Each output file (the file, or every part of a folder) as the job left
  // it: path, format, size, mtime_ns, head_tail_sha256.
  std::vector<JobInput> outputs;
  std::string finished;  // UTC, ISO 8601
  std::string written_by;
};

std::string job_record_json(const JobRecord& record);
Result<JobRecord> parse_job_record(std::string_view json, const std::string& origin);
// nullopt when there is none; kInvalidArgument naming it when it cannot be read or parsed.
Result<std::optional<JobRecord>> read_job_record(const std::string& path);
Status write_job_record(const std::string& path, const JobRecord& record);
// The first way an output differs from the record of it ("its size changed
// (100 -> 120 bytes)", "it is missing"); "" when it is as the job left it.
std::string output_difference(const JobInput& then);

// The identity of input files and of a model folder (stats and hashes
// them). Errors name the file.
Result<JobInput> describe_input(const std::string& path, const std::string& format);
Status describe_model(const std::string& model_dir, JobIdentity& identity);

// The files of a job writing to `output` (a file, or a folder when
// `folder`): its checkpoint, its lock, and the partial file of each output
// file (the output itself, or a part of the folder).
struct JobFiles {
  std::string checkpoint;
  std::string lock;
  // A finished job's record: ".<name>.infercost-job" beside an output file,
  // ".infercost-job" in an output folder (hidden: readers of the folder skip it).
  std::string record;
  static JobFiles for_output(const std::string& output, bool folder);
  static std::string partial_of(const std::string& output_file, bool in_folder);
};

// Reads the checkpoint at `path`: nullopt when there is none; kInvalidArgument
// naming it when it cannot be read or parsed (it is left as it is).
Result<std::optional<Checkpoint>> read_checkpoint(const std::string& path);
// Writes it atomically (temporary, fsync, rename, fsync of the folder).
Status write_checkpoint(const std::string& path, const Checkpoint& checkpoint);

// An exclusive lock on a job's output, held until destruction (flock on the
// job's lock file, which holds the holder's PID; removed on release).
class JobLock {
 public:
  // kInvalidArgument naming the output and the PID of the run that holds it.
  static Result<JobLock> acquire(const std::string& lock_path, const std::string& output);

 private:
  // The locked file's descriptor and path: on release, unlinked while still
  // held (a waiter then retries on a new file), then closed.
  struct LockFile {
    int fd = -1;
    std::string path;
    bool held() const { return fd >= 0; }
    void release();
  };
  Owned<LockFile> lock_;
};

}  // namespace infercost::run
