// The reader: the inputs, in order, as windows of rows (pipeline.h).
#include <filesystem>
#include <memory>
#include <utility>

#include "run/pipeline.h"
#include "run/run_input.h"

namespace infercost::run {

Result<std::unique_ptr<io::RowSource>> open_input(const std::string& path, io::InputFormat format,
                                                  const io::SourceOptions& options,
                                                  const io::SourcePosition& at) {
  INFERCOST_ASSIGN_OR_RETURN(std::unique_ptr<io::RowSource> source,
                             io::open_row_source(path, format, options));
  if (at.rows > 0 || at.offset > 0) INFERCOST_RETURN_IF_ERROR(source->seek(at));
  return source;
}

Result<size_t> read_window(io::RowSource& source, size_t window_rows, Window& window) {
  window.location_unit = source.location_unit();
  INFERCOST_ASSIGN_OR_RETURN(size_t got, source.next(window_rows, window.rows));
  window.end_position = source.position();
  window.source_rows_skipped = source.rows_skipped();
  if (got == 0) {
    window.last_in_file = true;
    window.source_first_skip = source.first_skip_reason();
  }
  return got;
}

void Pipeline::read_stage() {
  read_files();
  ordered_.close();
  tasks_.close();
}

void Pipeline::read_files() {
  io::SourceOptions source_options;
  source_options.column = c_.options->column;
  source_options.on_bad_row = c_.options->on_bad_row;
  const bool seed = policy_.batching == Batching::kSeed;
  uint64_t bytes_done = 0;  // input bytes behind the rows read, all files
  // A resumed run: the inputs the checkpoint says are done are not read;
  // the next one continues where it stopped.
  const size_t first = c_.job ? static_cast<size_t>(c_.job->start().files_done) : 0;
  for (size_t f = 0; f < first && f < c_.inputs->size(); ++f) {
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size((*c_.inputs)[f], ec);
    bytes_done += ec ? 0 : size;
  }
  for (size_t f = first; f < c_.inputs->size(); ++f) {
    // kSeed reads each file twice: a scan for its longest row, then the run.
    for (int pass = seed ? 0 : 1; pass < 2; ++pass) {
      const bool scan = pass == 0;
      std::unique_ptr<io::RowSource> source;
      {
        BusyTimer timer(counts_.read_s);
        const bool resumed_file = c_.job && f == first && !scan;
        Result<std::unique_ptr<io::RowSource>> opened =
            open_input((*c_.inputs)[f], (*c_.input_formats)[f], source_options,
                       resumed_file ? c_.job->start().position : io::SourcePosition());
        if (!opened.ok()) {
          submit_error(f, opened.status());
          return;
        }
        source = std::move(*opened);
      }
      if (!read_file(*source, f, scan, bytes_done)) return;
    }
  }
}

bool Pipeline::read_file(io::RowSource& source, size_t file, bool scan, uint64_t& bytes_done) {
  const uint64_t bytes_before = bytes_done;
  for (;;) {
    auto window = std::make_shared<Window>();
    window->file_index = static_cast<int>(file);
    window->scan = scan;
    Result<size_t> got = size_t{0};
    {
      BusyTimer timer(counts_.read_s);
      got = read_window(source, c_.window_rows, *window);
    }
    if (!got.ok()) {
      window->read_status = got.status();
      submit(window);
      return false;
    }
    if (!scan) {
      bytes_done = bytes_before + source.bytes_read();
      if (RunProgress* p = c_.options->progress) {
        p->rows_read.fetch_add(static_cast<int64_t>(*got));
        p->bytes_read.store(bytes_done);
      }
    }
    if (!submit(window)) return false;
    if (*got == 0) return true;
  }
}

bool Pipeline::submit_error(size_t file, Status status) {
  auto window = std::make_shared<Window>();
  window->file_index = static_cast<int>(file);
  window->read_status = std::move(status);
  return submit(window);
}

bool Pipeline::submit(const std::shared_ptr<Window>& window) {
  const size_t n = window->rows.size();
  const size_t tasks = prepare_window(*window);
  if (!ordered_.push(window)) return false;
  for (size_t t = 0; t < tasks; ++t) {
    const size_t begin = t * kTokenizeTaskRows;
    if (!tasks_.push({window, begin, std::min(n, begin + kTokenizeTaskRows)})) return false;
  }
  return true;
}

}  // namespace infercost::run
