#include "pipeline/job.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <cstdio>

#include "infercost/backend/backend.h"
#include "infercost/core/file.h"
#include "infercost/core/version.h"
#include "infercost/model/embedding.h"
#include "infercost/model/model_dir.h"
#include "infercost/pipeline/classifier.h"
#include "pipeline/settings.h"

namespace infercost::pipeline {

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
// device and the output plan decide of them.
Result<std::vector<std::pair<std::string, std::string>>> output_options(const RunOptions& o,
                                                                        const OutputPlan& plan) {
  RunOptions resolved = o;
  if (o.task == Task::kEmbed) {  // the settings the vectors are made with, those the model gives included
    INFERCOST_ASSIGN_OR_RETURN(EmbeddingSettings e, resolve_embedding(o.model_dir, o, resolved.max_length));
    resolved.pooling = model::pooling_name(e.pooling);
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
  Result<backend::DeviceSpec> device = backend::parse_device(o.device);
  options.emplace_back("--device (kind)", device.ok() ? device->kind : o.device);
  options.emplace_back("--output (kind)", plan.per_file ? "folder" : "file");
  options.emplace_back("--output-format", format_names(plan));
  return options;
}

std::string rows_phrase(const JobProgress& p) {
  return fmt::format("{} row{}", p.rows_done, p.rows_done == 1 ? "" : "s");
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

Result<std::unique_ptr<ResumableJob>> ResumableJob::open(const RunOptions& options, const OutputPlan& plan,
                                                         const std::vector<std::string>& inputs,
                                                         const std::vector<io::InputFormat>& formats) {
  std::unique_ptr<ResumableJob> job(new ResumableJob());
  job->plan_ = &plan;
  job->files_ = JobFiles::for_output(options.output, plan.per_file);
  INFERCOST_ASSIGN_OR_RETURN(job->lock_, JobLock::acquire(job->files_.lock, options.output));

  JobIdentity now;
  for (size_t i = 0; i < inputs.size(); ++i) {
    INFERCOST_ASSIGN_OR_RETURN(JobInput in, describe_input(inputs[i], io::input_format_name(formats[i])));
    now.inputs.push_back(std::move(in));
  }
  INFERCOST_RETURN_IF_ERROR(describe_model(options.model_dir, now));
  INFERCOST_ASSIGN_OR_RETURN(now.options, output_options(options, plan));

  const std::string& checkpoint_path = job->files_.checkpoint;
  Result<std::optional<Checkpoint>> found = read_checkpoint(checkpoint_path);
  if (!found.ok() && !options.force) {
    return invalid_argument(fmt::format(
        "{}: the checkpoint of a previous run cannot be used: {}; nothing was changed. Run with --force (and "
        "without --resume) to start over",
        options.output, found.status().message()));
  }
  std::optional<Checkpoint> previous = found.ok() ? std::move(*found) : std::nullopt;

  job->checkpoint_.job = now;
  job->checkpoint_.written_by = std::string("infercost ") + kVersion;
  if (previous && !options.resume) {
    if (!options.force) {
      return invalid_argument(
          fmt::format("{}: a previous run stopped after {} (checkpoint {}, {}); add --resume to continue it, "
                      "or --force to "
                      "start over",
                      options.output, rows_phrase(previous->progress), checkpoint_path, previous->updated));
    }
    std::remove(checkpoint_path.c_str());
    return job;
  }
  if (!found.ok()) {  // --force with --resume and an unreadable checkpoint: start over
    std::remove(checkpoint_path.c_str());
    return job;
  }
  if (!previous) {
    if (options.resume) {
      bool all = true;
      for (const std::string& path : plan.paths) all = all && path_exists(path);
      job->complete_ = all;
    }
    return job;
  }
  const std::string differs = identity_difference(previous->job, now);
  if (!differs.empty()) {
    return invalid_argument(
        fmt::format("{}: cannot resume: {}. The checkpoint {} is another job's; nothing was changed. Run "
                    "without --resume "
                    "and with --force to start over",
                    options.output, differs, checkpoint_path));
  }
  job->resuming_ = true;
  job->checkpoint_.progress = previous->progress;
  JobProgress& at = job->checkpoint_.progress;
  // Parts of finished inputs must be there; the part in progress may have
  // been renamed into place just before the run died (then its input is done).
  if (plan.per_file) {
    for (int64_t f = 0; f < at.files_done; ++f) {
      if (!path_exists(plan.paths[static_cast<size_t>(f)])) {
        return invalid_argument(fmt::format(
            "{}: cannot resume: {}, the part of a finished input, is missing; nothing was changed. Run with "
            "--force to start over",
            options.output, plan.paths[static_cast<size_t>(f)]));
      }
    }
    if (at.files_done < static_cast<int64_t>(plan.paths.size())) {
      const std::string& part = plan.paths[static_cast<size_t>(at.files_done)];
      if (at.output.bytes > 0 && !path_exists(JobFiles::partial_of(part, true)) && path_exists(part)) {
        at.files_done += 1;
        at.position = {};
        at.output = {};
      }
    }
    job->complete_ = at.files_done == static_cast<int64_t>(plan.paths.size());
  } else if (!path_exists(JobFiles::partial_of(plan.paths[0], false)) && path_exists(plan.paths[0])) {
    job->complete_ = true;  // renamed into place; only the checkpoint's removal was missed
  }
  if (job->complete_) std::remove(checkpoint_path.c_str());
  return job;
}

Status ResumableJob::check_precision(const std::string& resolved) {
  const std::string& before = checkpoint_.progress.precision;
  if (resuming_ && !before.empty() && before != resolved) {
    return invalid_argument(
        fmt::format("cannot resume: this run would compute in {}, the checkpoint's run computed in {}; "
                    "nothing was changed. "
                    "Pass --precision {} to continue it",
                    resolved, before, before));
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

void ResumableJob::finish() {
  std::remove(files_.checkpoint.c_str());
  sync_parent_folder(files_.checkpoint);
}

void ResumableJob::abandon(const std::vector<std::string>& written) {
  for (const std::string& path : plan_->paths)
    std::remove(JobFiles::partial_of(path, plan_->per_file).c_str());
  for (const std::string& path : written) std::remove(path.c_str());
  std::remove(files_.checkpoint.c_str());
}

}  // namespace infercost::pipeline
