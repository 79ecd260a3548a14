#include "infercost/pipeline/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "infercost/backend/backend.h"
#include "infercost/io/jsonl_reader.h"
#include "infercost/io/prediction_writer.h"
#include "infercost/model/model_dir.h"

namespace infercost::pipeline {

namespace {

// Rows read and tokenized together; tokenizing a chunk is split across threads.
constexpr size_t kChunkRows = 8192;

int resolve_threads(int requested) {
  if (requested > 0) return requested;
  unsigned hw = std::thread::hardware_concurrency();
  return hw == 0 ? 1 : static_cast<int>(hw);
}

// Tokenizes texts[i] into ids[i] on `threads` threads; a row's error goes to
// errors[i], so the caller reports bad rows in row order.
void tokenize_chunk(const text::WordPieceTokenizer& tokenizer, const io::RowBatch& rows,
                    std::vector<std::vector<int32_t>>& ids, std::vector<Status>& errors, int threads) {
  const size_t n = rows.size();
  if (ids.size() < n) ids.resize(n);
  errors.assign(n, Status());
  auto work = [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      ids[i].clear();
      Result<size_t> r = tokenizer.encode_append(rows.texts[i], ids[i]);
      if (!r.ok()) errors[i] = r.status();
    }
  };
  const size_t workers = std::min<size_t>(static_cast<size_t>(threads), (n + 255) / 256);
  if (workers <= 1) {
    work(0, n);
  } else {
    std::vector<std::thread> pool;
    const size_t per = (n + workers - 1) / workers;
    for (size_t w = 0; w < workers; ++w) {
      const size_t begin = w * per, end = std::min(n, begin + per);
      if (begin < end) pool.emplace_back(work, begin, end);
    }
    for (auto& t : pool) t.join();
  }
}

}  // namespace

void softmax_rows(float* logits, int rows, int labels) {
  for (int r = 0; r < rows; ++r) {
    float* x = logits + static_cast<size_t>(r) * labels;
    const float max = *std::max_element(x, x + labels);
    double sum = 0;
    for (int l = 0; l < labels; ++l) sum += std::exp(static_cast<double>(x[l] - max));
    for (int l = 0; l < labels; ++l)
      x[l] = static_cast<float>(std::exp(static_cast<double>(x[l] - max)) / sum);
  }
}

Result<RunMetrics> run_classification(const RunOptions& options) {
  if (options.inputs.empty()) return invalid_argument("no input files given");
  if (options.batch_size < 1) return invalid_argument("--batch-size must be at least 1");
  if (options.max_length < 2) return invalid_argument("--max-length must be at least 2 ([CLS] and [SEP])");
  INFERCOST_ASSIGN_OR_RETURN(io::OutputFormat format,
                             io::output_format_for(options.output, options.output_format));

  RunMetrics metrics;
  metrics.threads = resolve_threads(options.threads);
  metrics.batch_size = options.batch_size;
  metrics.max_length = options.max_length;
  metrics.device = options.device;

  model::LoadedModel model;
  std::unique_ptr<backend::Backend> engine;
  {
    StageTimer timer(metrics, "load");
    model::LoadOptions load;
    load.max_length = options.max_length;
    INFERCOST_ASSIGN_OR_RETURN(model, model::load_model_dir(options.model_dir, load));
    if (options.max_length > model.config.max_position_embeddings) {
      return invalid_argument("--max-length " + std::to_string(options.max_length) + " exceeds the model's " +
                              std::to_string(model.config.max_position_embeddings) + " positions");
    }
    backend::BackendOptions backend_options;
    backend_options.threads = metrics.threads;
    INFERCOST_ASSIGN_OR_RETURN(engine, backend::create_backend(options.device, backend_options));
    INFERCOST_RETURN_IF_ERROR(engine->prepare(model.config, model.weights));
    model.weights = model::EncoderWeights();  // the backend keeps its own copy
  }
  metrics.model_name = model.config.name;
  metrics.model_synthetic = model.config.synthetic;
  if (options.on_model_loaded) options.on_model_loaded(model.config);
  const text::WordPieceTokenizer& tokenizer = *model.tokenizer;
  const int n_labels = model.config.num_labels();

  io::PredictionColumns columns;
  columns.keep_text = options.keep_text;
  columns.labels = model.config.labels;
  INFERCOST_ASSIGN_OR_RETURN(auto writer, io::create_prediction_writer(options.output, format, columns));

  const auto wall_start = std::chrono::steady_clock::now();
  io::RowBatch rows;
  std::vector<std::vector<int32_t>> ids;
  std::vector<Status> errors;
  std::vector<size_t> kept;  // chunk rows that tokenized cleanly
  backend::TokenBatch batch;
  std::vector<std::string> batch_texts;
  std::vector<float> probabilities;
  uint64_t bytes_done = 0, bytes_total = 0;

  for (const std::string& path : options.inputs) {
    INFERCOST_ASSIGN_OR_RETURN(auto reader, io::JsonlReader::open(path, options.column, options.on_bad_row));
    bytes_total += reader->bytes_total();
    const uint64_t bytes_before = bytes_done;
    for (;;) {
      rows.clear();
      size_t got = 0;
      {
        StageTimer timer(metrics, "read");
        INFERCOST_ASSIGN_OR_RETURN(got, reader->next(kChunkRows, rows));
      }
      if (got == 0) break;
      {
        StageTimer timer(metrics, "tokenize");
        tokenize_chunk(tokenizer, rows, ids, errors, metrics.threads);
      }
      kept.clear();
      for (size_t i = 0; i < rows.size(); ++i) {
        if (errors[i].ok()) {
          kept.push_back(i);
          continue;
        }
        Status located = errors[i].with_context(path + ": line " + std::to_string(rows.lines[i]));
        if (options.on_bad_row == io::OnBadRow::kFail) return located;
        if (metrics.first_skip_reason.empty()) metrics.first_skip_reason = located.to_string();
        ++metrics.rows_skipped;
      }
      for (size_t start = 0; start < kept.size(); start += static_cast<size_t>(options.batch_size)) {
        const size_t end = std::min(kept.size(), start + static_cast<size_t>(options.batch_size));
        batch.batch = static_cast<int>(end - start);
        batch.seq_len = 0;
        for (size_t k = start; k < end; ++k)
          batch.seq_len = std::max<int>(batch.seq_len, ids[kept[k]].size());
        batch.ids.assign(static_cast<size_t>(batch.batch) * batch.seq_len, tokenizer.pad_id());
        batch.lengths.resize(batch.batch);
        batch_texts.resize(batch.batch);
        for (size_t k = start; k < end; ++k) {
          const auto& row_ids = ids[kept[k]];
          const size_t b = k - start;
          std::copy(row_ids.begin(), row_ids.end(), batch.ids.begin() + b * batch.seq_len);
          batch.lengths[b] = static_cast<int32_t>(row_ids.size());
          metrics.tokens += static_cast<int64_t>(row_ids.size());
          if (static_cast<int>(row_ids.size()) >= options.max_length) ++metrics.rows_at_max_length;
          if (options.keep_text) batch_texts[b] = std::move(rows.texts[kept[k]]);
        }
        metrics.padded_tokens += batch.padded_tokens();
        metrics.computed_tokens += engine->skips_padding() ? batch.real_tokens() : batch.padded_tokens();
        ++metrics.batches;
        backend::Logits logits;
        {
          StageTimer timer(metrics, "infer");
          INFERCOST_ASSIGN_OR_RETURN(logits, engine->classify(batch));
          if (logits.rows != batch.batch || logits.labels != n_labels) {
            return internal_error("backend returned logits of the wrong shape");
          }
          probabilities.assign(logits.values.begin(), logits.values.end());
          softmax_rows(probabilities.data(), logits.rows, n_labels);
        }
        {
          StageTimer timer(metrics, "write");
          INFERCOST_RETURN_IF_ERROR(writer->write(batch_texts, probabilities));
        }
        metrics.rows += batch.batch;
      }
      bytes_done = bytes_before + reader->bytes_read();
      if (options.progress) options.progress(metrics.rows, bytes_done, bytes_total);
    }
    if (reader->rows_skipped() > 0 && metrics.first_skip_reason.empty()) {
      metrics.first_skip_reason = reader->first_skip_reason().to_string();
    }
    metrics.rows_skipped += reader->rows_skipped();
  }
  {
    StageTimer timer(metrics, "write");
    INFERCOST_RETURN_IF_ERROR(writer->close());
  }
  metrics.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  metrics.peak_rss_bytes = peak_rss_bytes();
  return metrics;
}

}  // namespace infercost::pipeline
