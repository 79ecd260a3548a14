// The resumable side of a run with an output file or folder: its lock, its
// checkpoint, the partial files of its outputs, and what a resumed run skips
// (docs/checkpoint.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "infercost/options.h"
#include "infercost/status.h"
#include "io/prediction_writer.h"
#include "io/row_source.h"
#include "run/checkpoint.h"
#include "run/engine.h"
#include "run/output_plan.h"

namespace infercost::run {

class ResumableJob {
 public:
  // Locks the output and reads its checkpoint and record. options.force
  // drops both and starts afresh. Otherwise (kInvalidArgument naming what
  // and why, nothing touched):
  // - a checkpoint of a run that stopped half-way: without options.resume,
  //   refused ("add --resume ... or --force"); with it, a checkpoint of
  //   another job (inputs, model or an output-changing option differ), one
  //   that cannot be read, and one that does not add up (its counts against
  //   the inputs it calls done, the position in the next, the rows of the
  //   outputs and of the partial) are refused; else the run continues it.
  // - no checkpoint, and an output this job would write already exists:
  //   refused without options.resume (an output is never replaced without
  //   force); with it, a finished output of this same job, as its record
  //   says and unchanged since, is complete() (nothing to do); anything else
  //   (another job's, changed since, no record) is refused.
  // - neither: the job starts.
  // `device`: options.device as resolve_settings parsed it.
  static Result<std::unique_ptr<ResumableJob>> open(const RunOptions& options, const DeviceSpec& device,
                                                    const OutputPlan& plan,
                                                    const std::vector<std::string>& inputs,
                                                    const std::vector<io::InputFormat>& formats);

  // --resume of a job whose outputs are all there: nothing to do.
  bool complete() const { return complete_; }
  // Continuing an earlier run's checkpoint.
  bool resuming() const { return resuming_; }
  // Where this run starts: all zero for a new job.
  const JobProgress& start() const { return checkpoint_.progress; }
  const std::string& checkpoint_path() const { return files_.checkpoint; }

  // Resuming: kInvalidArgument when the backends resolved the precision
  // otherwise than the checkpoint's run did (another CPU, say).
  Status check_precision(const std::string& resolved);

  // How output file `index` of the plan is written: to its partial, from the
  // checkpoint for the one in progress when resuming.
  io::ResumableOutput output_for(size_t index) const;

  // Records `progress` (taken after the outputs it describes were made
  // durable) in the checkpoint.
  Status save(const JobProgress& progress);
  // The run ended with every output in place: the job's record (JobFiles::
  // record: the job, its final counts, each output as it is now) is written
  // and the checkpoint goes.
  Status finish(const JobProgress& final);
  // The run failed on something a resume cannot get past (bad data, bad
  // usage): everything the job wrote goes: partials, the parts of a folder
  // output (`written`: every part path the job completed), the checkpoint.
  void abandon(const std::vector<std::string>& written);

  // A checkpoint is on disk (this run saved one, or it resumed one), and the
  // progress it holds.
  bool has_checkpoint() const { return resuming_ || checkpoints_written_ > 0; }
  const JobProgress& last_saved() const { return checkpoint_.progress; }
  int checkpoints_written() const { return checkpoints_written_; }
  double checkpoint_seconds() const { return checkpoint_seconds_; }

 private:
  ResumableJob() = default;

  // No checkpoint: what the outputs already there allow (open()).
  Status check_existing_outputs(const RunOptions& options, const JobIdentity& now);

  const OutputPlan* plan_ = nullptr;
  std::string output_;  // the output file (links followed) or folder
  JobFiles files_;
  JobLock lock_;
  Checkpoint checkpoint_;  // the job, and where it stands as last saved
  bool resuming_ = false;
  bool complete_ = false;
  int checkpoints_written_ = 0;
  double checkpoint_seconds_ = 0;
};

// Whether a failed run's checkpoint is worth keeping: interruptions, I/O,
// device and memory errors can be resumed from; bad data and bad usage would
// fail again at the same row.
bool resumable_failure(const Status& status);

}  // namespace infercost::run
