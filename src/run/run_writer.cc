// The writer: windows in input order to the outputs (one file, or a part per
// input file), and the job's checkpoints between windows (pipeline.h).
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/test_point.h"
#include "run/pipeline.h"

namespace infercost::run {

void Pipeline::write_stage() {
  const RunOptions& options = *c_.options;
  WriterFile file;
  auto last_checkpoint = std::chrono::steady_clock::now();
  while (std::optional<std::shared_ptr<Window>> popped = written_.pop()) {
    Window& w = **popped;
    if (w.file_index != file.index) {
      file.index = w.file_index;
      const bool resumed = c_.job && c_.job->resuming() && w.file_index == c_.job->start().files_done;
      file.position = resumed ? c_.job->start().position : io::SourcePosition();
      file.source_skipped = 0;
    }
    writer_clean_ = false;
    bool saved = false;
    {
      BusyTimer timer(counts_.write_s);
      if (!write_window(w, file, saved)) return;
    }
    writer_clean_ = true;
    if (c_.job && !saved &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - last_checkpoint).count() >=
            options.checkpoint_seconds) {
      Status s = save_checkpoint();
      if (!s.ok()) {
        fail(s);
        return;
      }
      saved = true;
    }
    if (saved) last_checkpoint = std::chrono::steady_clock::now();
    if (options.progress) options.progress->rows_written.store(file.rows_written);
  }
}

bool Pipeline::write_window(Window& w, WriterFile& file, bool& saved) {
  const size_t f = static_cast<size_t>(w.file_index);
  Result<io::PredictionWriter*> out = writer_for(f);
  if (!out.ok()) {
    fail(out.status());
    return false;
  }
  const size_t labels = static_cast<size_t>(classifier_.outputs());
  std::vector<std::string> texts;
  std::vector<uint8_t> nulls;
  std::vector<float> probs;
  int64_t nulls_here = 0, dropped_here = 0;
  for (size_t i = 0; i < w.rows.size(); ++i) {
    if (w.dropped[i]) {
      ++dropped_here;
      continue;
    }
    texts.push_back(c_.options->keep_text ? std::move(w.rows.texts[i]) : std::string());
    nulls.push_back(w.rows.is_null[i]);
    nulls_here += w.rows.is_null[i] ? 1 : 0;
    probs.insert(probs.end(), w.probs.begin() + static_cast<ptrdiff_t>(i * labels),
                 w.probs.begin() + static_cast<ptrdiff_t>((i + 1) * labels));
  }
  if (!texts.empty()) {
    Status s = (*out)->write(texts, nulls, probs);
    if (!s.ok()) {
      fail(s);
      return false;
    }
  }
  file.rows_written += static_cast<int64_t>(texts.size());
  // What the job has accounted for once these rows are durable.
  progress_.rows_done += w.end_position.rows - file.position.rows;
  progress_.rows_null += nulls_here;
  progress_.rows_skipped += dropped_here + (w.source_rows_skipped - file.source_skipped);
  file.source_skipped = w.source_rows_skipped;
  if (progress_.first_skip_reason.empty()) {
    progress_.first_skip_reason = !w.first_drop_reason.empty() ? w.first_drop_reason
                                  : w.source_first_skip.ok()   ? std::string()
                                                               : w.source_first_skip.to_string();
  }
  file.position = w.end_position;
  progress_.position = w.end_position;
  if (w.last_in_file) {
    progress_.files_done = w.file_index + 1;
    progress_.position = io::SourcePosition();
  }
  if (w.last_in_file && c_.plan->per_file) return end_part(f, saved);
  return true;
}

// The output of input `file`: the single one, or its part of a folder output
// (created at its first window).
Result<io::PredictionWriter*> Pipeline::writer_for(size_t file) {
  const OutputPlan& plan = *c_.plan;
  if (!plan.per_file) return c_.single_writer;
  if (!part_) {
    io::ResumableOutput resumable;
    if (c_.job) resumable = c_.job->output_for(file);
    INFERCOST_ASSIGN_OR_RETURN(part_,
                               io::create_prediction_writer(plan.paths[file], plan.formats[file], *c_.columns,
                                                            c_.job ? &resumable : nullptr));
  }
  return part_.get();
}

// The part of input `file` complete: closed, and a checkpoint saying so.
bool Pipeline::end_part(size_t file, bool& saved) {
  Status s = part_->close();
  if (!s.ok()) {
    fail(s);
    return false;
  }
  counts_.committed.push_back(c_.plan->paths[file]);
  part_.reset();
  test_point("part-done");
  // Between two parts: a checkpoint now says the part is done.
  if (c_.job) {
    Status saved_now = save_checkpoint();
    if (!saved_now.ok()) {
      fail(saved_now);
      return false;
    }
    saved = true;
  }
  return true;
}

// The output written so far made durable, then the checkpoint saying so.
Status Pipeline::save_checkpoint() {
  io::PredictionWriter* out = c_.plan->per_file ? part_.get() : c_.single_writer;
  if (out) {
    INFERCOST_ASSIGN_OR_RETURN(progress_.output, out->checkpoint());
  } else {
    progress_.output = io::OutputCheckpoint();
  }
  test_point("output-synced");  // the output durable, its checkpoint not yet written
  return c_.job->save(progress_);
}

}  // namespace infercost::run
