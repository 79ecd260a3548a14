#include "run/job.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <cstdio>

#include "backend/backend.h"
#include "core/file.h"
#include "engine/encoder.h"
#include "engine/settings.h"
#include "infercost/version.h"
#include "model/embedding.h"
#include "model/model_dir.h"

namespace infercost::run {

namespace {

std::string format_names(const OutputPlan& plan) {
  std::vector<std::string> names;
  for (io::OutputFormat f : plan.formats) {
    names.push_back(f == io::OutputFormat::kParquet ? "parquet"
                    : f == io::OutputFormat::kCsv   ? "csv"
                                                    : "jsonl");
  }
  return fmt::format("{}", fmt::join(names, ","));
}

// The settings that change what the output holds (settings.h), and what the
// device (as resolve_settings parsed it) and the output plan decide of them.
Result<std::vector<std::pair<std::string, std::string>>> output_options(const RunOptions& o,
                                                                        const DeviceSpec& device,
                                                                        const OutputPlan& plan) {
  RunOptions resolved = o;
  if (o.task == Task::kEmbed) {  // the settings the vectors are made with, those the model gives included
    INFERCOST_ASSIGN_OR_RETURN(EmbeddingSettings e, resolve_embedding(o.model_dir, o, resolved.max_length));
    resolved.pooling = e.pooling;
    resolved.normalize = e.normalize;
    resolved.prefix = e.prefix;
  }
  if (resolved.max_length == 0) {  // the model's limit, as the run will resolve it
    INFERCOST_ASSIGN_OR_RETURN(resolved.max_length, model::read_model_length_limit(o.model_dir));
  }
  std::vector<std::pair<std::string, std::string>> options = output_settings(resolved);
  // An embedding job is another job (job_difference names the command first); a run's identity
  // stays as checkpoints before embeddings wrote it.
  if (o.task == Task::kEmbed) options.emplace_back(kJobCommandOption, "embed");
  options.emplace_back("--device (kind)", device.kind);
  options.emplace_back("--output (kind)", plan.per_file ? "folder" : "file");
  options.emplace_back("--output-format", format_names(plan));
  return options;
}

}  // namespace

bool resumable_failure(const Status& status) {
  switch (status.code()) {
    case StatusCode::kCorruption:
    case StatusCode::kInvalidArgument:
    case StatusCode::kNotFound:
    case StatusCode::kUnsupported: return false;
    default: return true;
  }
}

namespace {

// The rows an input holds, as a run consumes them (returned or skipped as
// bad): a Parquet footer's count, else the file read through (no tokenizing).
Result<int64_t> rows_consumed(const std::string& path, io::InputFormat format,
                              const io::SourceOptions& options) {
  if (format == io::InputFormat::kParquet) return io::rows_stated(path, format);
  INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<io::RowSource> source,
                             io::open_row_source(path, format, options));
  io::RowBatch batch;
  for (;;) {
    batch.clear();
    INFERCOST_ASSIGN_OR_RETURN(size_t got, source->next(1 << 16, batch));
    if (got == 0) return source->position().rows;
  }
}

// Whether reading `path` from its start reaches `at` exactly: "" if so, else
// what it reaches instead. Windows end after a row a source returned, so a
// true position is one of those ends.
Result<std::string> replay_to(const std::string& path, io::InputFormat format,
                              const io::SourceOptions& options, const io::SourcePosition& at) {
  if (format == io::InputFormat::kParquet) {
    INFERCOST_ASSIGN_OR_RETURN(int64_t rows, io::rows_stated(path, format));
    if (at.rows > rows) return fmt::format("it holds {} rows, the checkpoint is at row {}", rows, at.rows);
    if (at.offset != 0 || at.line != 0) return std::string("a Parquet position has rows only");
    return std::string();
  }
  // A first pass takes as many rows as are left at once; rows skipped as bad
  // on the way can carry it past `at`, and then a second goes row by row.
  for (const bool row_by_row : {false, true}) {
    INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<io::RowSource> source,
                               io::open_row_source(path, format, options));
    io::RowBatch batch;
    while (source->position().rows < at.rows) {
      batch.clear();
      const int64_t left = at.rows - source->position().rows;
      INFERCOST_ASSIGN_OR_RETURN(
          size_t got,
          source->next(row_by_row ? 1 : static_cast<size_t>(std::min<int64_t>(left, 1 << 16)), batch));
      if (got == 0) break;
    }
    const io::SourcePosition reached = source->position();
    if (reached.rows > at.rows && !row_by_row) continue;
    if (reached.rows != at.rows) {
      return fmt::format("it holds {} rows, the checkpoint is at row {}", reached.rows, at.rows);
    }
    if (reached.offset != at.offset || reached.line != at.line) {
      return fmt::format("its row {} ends at byte {} (line {}), the checkpoint says byte {} (line {})",
                         at.rows, reached.offset, reached.line, at.offset, at.line);
    }
    return std::string();
  }
  return std::string();
}

// What the checkpoint of a folder output or a file says, cross-checked with
// the inputs it calls done, the input in progress and the outputs: "" when
// it adds up, else the first thing that does not. `consumed` / `written`:
// per input done, its rows and (folder) its part's rows, filled as read.
Result<std::string> progress_difference(const JobProgress& at, const OutputPlan& plan,
                                        const std::vector<std::string>& inputs,
                                        const std::vector<io::InputFormat>& formats,
                                        const io::SourceOptions& source_options) {
  if (at.rows_skipped > at.rows_done || at.rows_null > at.rows_done - at.rows_skipped) {
    return fmt::format("it counts {} rows done, {} of them skipped and {} null", at.rows_done,
                       at.rows_skipped, at.rows_null);
  }
  const size_t done = static_cast<size_t>(at.files_done);
  int64_t consumed = 0, written = 0;
  for (size_t f = 0; f < done; ++f) {
    INFERCOST_ASSIGN_OR_RETURN(int64_t rows, rows_consumed(inputs[f], formats[f], source_options));
    consumed += rows;
    if (plan.per_file) {
      Result<int64_t> part = io::rows_in_output(plan.paths[f], plan.formats[f], UINT64_MAX);
      if (!part.ok())
        return fmt::format("the part of a finished input cannot be read: {}", part.status().message());
      written += *part;
    }
  }
  if (done < inputs.size()) {
    INFERCOST_ASSIGN_OR_RETURN(std::string off,
                               replay_to(inputs[done], formats[done], source_options, at.position));
    if (!off.empty()) return fmt::format("input {} ({}): {}", done + 1, inputs[done], off);
    consumed += at.position.rows;
  } else if (at.position.rows != 0 || at.position.offset != 0) {
    return std::string("every input is done, yet it holds a position in one");
  }
  if (consumed != at.rows_done) {
    return fmt::format(
        "it counts {} rows done, the {} input{} it calls done and the position in the next hold {}",
        at.rows_done, done, done == 1 ? "" : "s", consumed);
  }
  // The output in progress: the single output, or the part of input `done`.
  if (!plan.per_file || done < inputs.size()) {
    const size_t index = plan.per_file ? done : 0;
    const std::string partial = JobFiles::partial_of(plan.paths[index], plan.per_file);
    int64_t in_partial = 0;
    if (at.output.bytes > 0 || !at.output.parquet_footer.empty()) {
      Result<int64_t> rows =
          io::rows_in_output(partial, plan.formats[index], at.output.bytes, at.output.parquet_footer);
      if (!rows.ok()) return fmt::format("the partial output: {}", rows.status().message());
      in_partial = *rows;
    }
    if (in_partial != at.output.rows) {
      return fmt::format("the partial output {} holds {} rows where the checkpoint says {}", partial,
                         in_partial, at.output.rows);
    }
    written += in_partial;
  }
  if (written != at.rows_done - at.rows_skipped) {
    return fmt::format("the output{} hold{} {} rows, but {} rows done less {} skipped is {}",
                       plan.per_file ? "s" : "", plan.per_file ? "" : "s", written, at.rows_done,
                       at.rows_skipped, at.rows_done - at.rows_skipped);
  }
  return std::string();
}

io::SourceOptions source_options_of(const RunOptions& options) {
  io::SourceOptions s;
  s.column = options.column;
  s.on_bad_row = options.on_bad_row;
  return s;
}

// The output files that exist now: the one file, or the parts a folder's
// inputs would write.
std::vector<std::string> existing_outputs(const OutputPlan& plan) {
  std::vector<std::string> out;
  for (const std::string& path : plan.paths) {
    if (path_exists(path)) out.push_back(path);
  }
  return out;
}

std::string rows_phrase(int64_t rows) {
  return fmt::format("{} row{}", rows, rows == 1 ? "" : "s");
}

// Who the job is: its inputs, its model and the options that change its output.
Result<JobIdentity> identity_of(const RunOptions& options, const DeviceSpec& device, const OutputPlan& plan,
                                const std::vector<std::string>& inputs,
                                const std::vector<io::InputFormat>& formats) {
  JobIdentity now;
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFERCOST_ASSIGN_OR_RETURN(JobInput in, describe_input(inputs[i], io::input_format_name(formats[i])));
    now.inputs.push_back(std::move(in));
  }
  INFERCOST_RETURN_IF_ERROR(describe_model(options.model_dir, now));
  INFERCOST_ASSIGN_OR_RETURN(now.options, output_options(options, device, plan));
  return now;
}

// A folder of parts resumed at `at`: the parts of finished inputs must be
// there; the part in progress may have been renamed into place just before
// the run died (then its input is done, and its rows are counted from the
// input and the part).
Status recount_parts(JobProgress& at, const OutputPlan& plan, const std::vector<std::string>& inputs,
                     const std::vector<io::InputFormat>& formats, const io::SourceOptions& source_options,
                     const std::string& output) {
  for (int64_t f = 0; f < at.files_done; ++f) {
    if (!path_exists(plan.paths[static_cast<size_t>(f)])) {
      return invalid_argument(fmt::format(
          "{}: cannot resume: {}, the part of a finished input, is missing; nothing was changed. Run with "
          "{force} to start over",
          output, plan.paths[static_cast<size_t>(f)], fmt::arg("force", setting_ref("force"))));
    }
  }
  if (at.files_done >= static_cast<int64_t>(plan.paths.size())) return Status();
  const size_t f = static_cast<size_t>(at.files_done);
  const std::string& part = plan.paths[f];
  if (at.output.bytes > 0 && !path_exists(JobFiles::partial_of(part, true)) && path_exists(part)) {
    INFERCOST_ASSIGN_OR_RETURN(int64_t rows, rows_consumed(inputs[f], formats[f], source_options));
    INFERCOST_ASSIGN_OR_RETURN(int64_t in_part, io::rows_in_output(part, plan.formats[f], UINT64_MAX));
    // Before this input: the checkpoint's counts less what it had of it.
    at.rows_done += rows - at.position.rows;
    at.rows_skipped += (rows - in_part) - (at.position.rows - at.output.rows);
    at.files_done += 1;
    at.position = {};
    at.output = {};
  }
  return Status();
}

}  // namespace

Result<std::unique_ptr<ResumableJob>> ResumableJob::open(const RunOptions& options, const DeviceSpec& device,
                                                         const OutputPlan& plan,
                                                         const std::vector<std::string>& inputs,
                                                         const std::vector<io::InputFormat>& formats) {
  std::unique_ptr<ResumableJob> job(new ResumableJob());
  job->plan_ = &plan;
  // A file output reached through links keeps its job's files beside the file itself.
  job->output_ = plan.per_file ? options.output : plan.paths[0];
  job->files_ = JobFiles::for_output(job->output_, plan.per_file);
  const std::string& output = options.output;
  INFERCOST_ASSIGN_OR_RETURN(job->lock_, JobLock::acquire(job->files_.lock, output));

  INFERCOST_ASSIGN_OR_RETURN(JobIdentity now, identity_of(options, device, plan, inputs, formats));
  job->checkpoint_.job = now;
  job->checkpoint_.written_by = std::string("infercost ") + kVersion;

  const std::string& checkpoint_path = job->files_.checkpoint;
  Result<std::optional<Checkpoint>> found = read_checkpoint(checkpoint_path);
  if (!found.ok() && !options.force) {
    return invalid_argument(
        fmt::format("{}: the checkpoint of a previous run cannot be used: {}; nothing was changed. Run with "
                    "{force} (and "
                    "without {resume}) to start over",
                    output, found.status().message(), fmt::arg("force", setting_ref("force")),
                    fmt::arg("resume", setting_ref("resume"))));
  }
  std::optional<Checkpoint> previous = found.ok() ? std::move(*found) : std::nullopt;
  // --force starts afresh (with --resume, only where there is no checkpoint
  // to continue): the checkpoint and record go now, the outputs as this run
  // replaces them.
  if (options.force && !(options.resume && previous)) {
    std::remove(checkpoint_path.c_str());
    std::remove(job->files_.record.c_str());
    return job;
  }
  if (previous && !options.resume) {
    return invalid_argument(
        fmt::format("{}: a previous run stopped after {} (checkpoint {}, {}); add {resume} to continue it, "
                    "or {force} to start over",
                    output, rows_phrase(previous->progress.rows_done), checkpoint_path, previous->updated,
                    fmt::arg("resume", setting_ref("resume")), fmt::arg("force", setting_ref("force"))));
  }
  if (!previous) {
    INFERCOST_RETURN_IF_ERROR(job->check_existing_outputs(options, now));
    return job;
  }
  const std::string differs = identity_difference(previous->job, now);
  if (!differs.empty()) {
    return invalid_argument(
        fmt::format("{}: cannot resume: {}. The checkpoint {} is another job's; nothing was changed. Run "
                    "without {resume} and with {force} to start over",
                    output, differs, checkpoint_path, fmt::arg("resume", setting_ref("resume")),
                    fmt::arg("force", setting_ref("force"))));
  }
  job->resuming_ = true;
  job->checkpoint_.progress = previous->progress;
  JobProgress& at = job->checkpoint_.progress;
  const io::SourceOptions source_options = source_options_of(options);
  if (plan.per_file) {
    INFERCOST_RETURN_IF_ERROR(recount_parts(at, plan, inputs, formats, source_options, output));
    job->complete_ = at.files_done == static_cast<int64_t>(plan.paths.size());
  } else if (!path_exists(JobFiles::partial_of(plan.paths[0], false)) && path_exists(plan.paths[0])) {
    job->complete_ = true;  // renamed into place; only the checkpoint's removal was missed
  }
  if (!job->complete_) {
    INFERCOST_ASSIGN_OR_RETURN(std::string off,
                               progress_difference(at, plan, inputs, formats, source_options));
    if (!off.empty()) {
      return invalid_argument(fmt::format(
          "{}: cannot resume: the checkpoint {} does not add up: {}; nothing was changed. Run with "
          "{force} to start over",
          output, checkpoint_path, off, fmt::arg("force", setting_ref("force"))));
    }
    return job;
  }
  // Done before: the record the run could not write, then the checkpoint goes.
  INFERCOST_RETURN_IF_ERROR(job->finish(at));
  return job;
}

Status ResumableJob::check_existing_outputs(const RunOptions& options, const JobIdentity& now) {
  const std::vector<std::string> existing = existing_outputs(*plan_);
  Result<std::optional<JobRecord>> found = read_job_record(files_.record);
  if (existing.empty()) {  // nothing to replace; a record of outputs since removed is stale
    if (!found.ok() || *found) std::remove(files_.record.c_str());
    return Status();
  }
  const std::string& output = options.output;
  const std::string what = plan_->per_file ? fmt::format("{} (in {})", existing[0], output) : existing[0];
  if (!found.ok()) {
    return invalid_argument(fmt::format(
        "{} already exists and its job record cannot be read ({}); infercost does not replace an output "
        "without {force}",
        what, found.status().message(), fmt::arg("force", setting_ref("force"))));
  }
  const std::optional<JobRecord>& record = *found;
  if (!record) {
    return invalid_argument(fmt::format(
        "{} already exists, and no job record ({}) says which run wrote it; infercost does not replace an "
        "output without {force}",
        what, files_.record, fmt::arg("force", setting_ref("force"))));
  }
  std::string differs = identity_difference(record->job, now, "record");
  for (const JobInput& out : record->outputs) {
    if (!differs.empty()) break;
    if (std::string changed = output_difference(out); !changed.empty()) {
      differs = fmt::format("{} changed after the job finished: {}", out.path, changed);
    }
  }
  if (differs.empty()) {
    for (const std::string& path : plan_->paths) {
      const bool recorded = std::any_of(record->outputs.begin(), record->outputs.end(),
                                        [&](const JobInput& out) { return out.path == path; });
      if (!recorded) {
        differs = fmt::format("{} is not among the outputs the job wrote", path);
        break;
      }
    }
  }
  const std::string finished =
      fmt::format("`infercost {}` finished it at {}, {}",
                  std::any_of(record->job.options.begin(), record->job.options.end(),
                              [](const auto& kv) { return kv.first == kJobCommandOption; })
                      ? "embed"
                      : "run",
                  record->finished, rows_phrase(record->progress.rows_done));
  if (!options.resume) {
    return invalid_argument(fmt::format(
        "{} already exists ({}{}); infercost does not replace an output without {force}{}", what, finished,
        differs.empty() ? ": this same job" : "",
        differs.empty() ? " (" + setting_ref("resume") + " says there is nothing to do)" : std::string(),
        fmt::arg("force", setting_ref("force"))));
  }
  if (!differs.empty()) {
    return invalid_argument(fmt::format(
        "{}: cannot resume: {}. It holds the finished output of another job ({}; record {}); nothing was "
        "changed. Run without {resume} and with {force} to replace it",
        output, differs, finished, files_.record, fmt::arg("resume", setting_ref("resume")),
        fmt::arg("force", setting_ref("force"))));
  }
  complete_ = true;
  return Status();
}

Status ResumableJob::check_precision(const std::string& resolved) {
  const std::string& before = checkpoint_.progress.precision;
  if (resuming_ && !before.empty() && before != resolved) {
    return invalid_argument(
        fmt::format("cannot resume: this run would compute in {}, the checkpoint's run computed in {}; "
                    "nothing was changed. "
                    "Pass {} to continue it",
                    resolved, before, setting_ref("precision", before)));
  }
  checkpoint_.progress.precision = resolved;
  return Status();
}

io::ResumableOutput ResumableJob::output_for(size_t index) const {
  io::ResumableOutput out;
  out.partial = JobFiles::partial_of(plan_->paths[index], plan_->per_file);
  const JobProgress& at = checkpoint_.progress;
  const size_t in_progress = plan_->per_file ? static_cast<size_t>(at.files_done) : 0;
  if (resuming_ && index == in_progress && at.output.bytes > 0) out.from = &at.output;
  return out;
}

Status ResumableJob::save(const JobProgress& progress) {
  const auto start = std::chrono::steady_clock::now();
  Checkpoint next = checkpoint_;
  next.progress = progress;
  next.progress.precision = checkpoint_.progress.precision;
  next.updated.clear();  // checkpoint_json stamps the time
  Status s = write_checkpoint(files_.checkpoint, next);
  checkpoint_seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!s.ok()) return s;
  checkpoint_ = std::move(next);
  ++checkpoints_written_;
  return s;
}

Status ResumableJob::finish(const JobProgress& final) {
  JobRecord record;
  record.job = checkpoint_.job;
  record.progress = final;
  record.progress.precision = checkpoint_.progress.precision;
  record.written_by = checkpoint_.written_by;
  for (size_t i = 0; i < plan_->paths.size(); ++i) {
    const io::OutputFormat f = plan_->formats[i];
    INFERCOST_ASSIGN_OR_RETURN(JobInput out,
                               describe_input(plan_->paths[i], f == io::OutputFormat::kParquet ? "parquet"
                                                               : f == io::OutputFormat::kCsv   ? "csv"
                                                                                               : "jsonl"));
    record.outputs.push_back(std::move(out));
  }
  INFERCOST_RETURN_IF_ERROR(write_job_record(files_.record, record));
  std::remove(files_.checkpoint.c_str());
  sync_parent_folder(files_.checkpoint);
  return Status();
}

void ResumableJob::abandon(const std::vector<std::string>& written) {
  for (const std::string& path : plan_->paths)
    std::remove(JobFiles::partial_of(path, plan_->per_file).c_str());
  for (const std::string& path : written) std::remove(path.c_str());
  std::remove(files_.checkpoint.c_str());
  std::remove(files_.record.c_str());
}

}  // namespace infercost::run
