#include "infercost/pipeline/runner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <thread>

#include "infercost/backend/backend.h"
#include "infercost/io/prediction_writer.h"
#include "infercost/io/row_source.h"
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
      if (!rows.is_null.empty() && rows.is_null[i]) continue;
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

namespace {

bool is_folder_output(const std::string& output) {
  if (output.empty() || output == "-") return false;
  if (output.back() == '/') return true;
  std::error_code ec;
  return std::filesystem::is_directory(output, ec);
}

std::string extension_for(io::OutputFormat format) {
  switch (format) {
    case io::OutputFormat::kJsonl: return ".jsonl";
    case io::OutputFormat::kCsv: return ".csv";
    case io::OutputFormat::kParquet: return ".parquet";
  }
  return ".jsonl";
}

// One output per input file, named after it: "<folder>/<stem><ext>".
struct OutputPlan {
  bool per_file = false;
  std::vector<std::string> paths;  // per input (per_file) or one
  std::vector<io::OutputFormat> formats;
};

Result<OutputPlan> plan_outputs(const RunOptions& options, const std::vector<std::string>& inputs,
                                const std::vector<io::InputFormat>& input_formats) {
  OutputPlan plan;
  if (!is_folder_output(options.output)) {
    INFERCOST_ASSIGN_OR_RETURN(io::OutputFormat format,
                               io::output_format_for(options.output, options.output_format));
    plan.paths.push_back(options.output);
    plan.formats.push_back(format);
    return plan;
  }
  plan.per_file = true;
  std::error_code ec;
  std::filesystem::create_directories(options.output, ec);
  if (ec) return io_error(options.output + ": cannot create the output folder: " + ec.message());
  std::map<std::string, std::string> taken;  // part path -> input
  for (size_t i = 0; i < inputs.size(); ++i) {
    io::OutputFormat format = io::OutputFormat::kJsonl;
    if (!options.output_format.empty()) {
      INFERCOST_ASSIGN_OR_RETURN(format, io::output_format_for("", options.output_format));
    } else if (input_formats[i] == io::InputFormat::kParquet) {
      format = io::OutputFormat::kParquet;
    } else if (input_formats[i] == io::InputFormat::kCsv) {
      format = io::OutputFormat::kCsv;
    }
    const std::string part =
        (std::filesystem::path(options.output) / std::filesystem::path(inputs[i]).stem()).string() +
        extension_for(format);
    auto [it, inserted] = taken.emplace(part, inputs[i]);
    if (!inserted) {
      return invalid_argument("inputs " + it->second + " and " + inputs[i] + " would both write " + part +
                              "; give them different names or use one output file");
    }
    plan.paths.push_back(part);
    plan.formats.push_back(format);
  }
  return plan;
}

}  // namespace

Result<RunMetrics> run_classification(const RunOptions& options) {
  if (options.inputs.empty()) return invalid_argument("no input files given");
  if (options.batch_size < 1) return invalid_argument("--batch-size must be at least 1");
  if (options.max_length < 2) return invalid_argument("--max-length must be at least 2 ([CLS] and [SEP])");
  INFERCOST_ASSIGN_OR_RETURN(std::vector<std::string> inputs, io::expand_inputs(options.inputs));
  std::vector<io::InputFormat> input_formats;
  for (const std::string& path : inputs) {
    INFERCOST_ASSIGN_OR_RETURN(io::InputFormat format, io::input_format_for(path, options.input_format));
    input_formats.push_back(format);
  }
  INFERCOST_ASSIGN_OR_RETURN(OutputPlan plan, plan_outputs(options, inputs, input_formats));

  RunMetrics metrics;
  metrics.threads = resolve_threads(options.threads);
  metrics.batch_size = options.batch_size;
  metrics.max_length = options.max_length;
  metrics.device = options.device;
  metrics.input_files = static_cast<int64_t>(inputs.size());

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
  columns.compression = options.compression;

  // Parts this run completed: removed again if a later input fails.
  std::vector<std::string> committed;
  auto remove_committed = [&committed] {
    for (const std::string& path : committed) std::remove(path.c_str());
  };
  std::unique_ptr<io::PredictionWriter> writer;
  if (!plan.per_file) {
    INFERCOST_ASSIGN_OR_RETURN(writer, io::create_prediction_writer(plan.paths[0], plan.formats[0], columns));
  }

  const auto wall_start = std::chrono::steady_clock::now();
  io::RowBatch rows;
  std::vector<std::vector<int32_t>> ids;
  std::vector<Status> errors;
  std::vector<size_t> kept;        // chunk rows to classify (tokenized cleanly, not null)
  std::vector<uint8_t> dropped;    // chunk rows skipped as bad
  std::vector<float> chunk_probs;  // [chunk rows, labels]
  std::vector<std::string> out_texts;
  std::vector<uint8_t> out_null;
  std::vector<float> out_probs;
  backend::TokenBatch batch;
  uint64_t bytes_done = 0, bytes_total = 0;
  io::SourceOptions source_options;
  source_options.column = options.column;
  source_options.on_bad_row = options.on_bad_row;

  for (size_t file_index = 0; file_index < inputs.size(); ++file_index) {
    const std::string& path = inputs[file_index];
    Result<std::unique_ptr<io::RowSource>> opened =
        io::open_row_source(path, input_formats[file_index], source_options);
    if (!opened.ok()) {
      remove_committed();
      return opened.status();
    }
    std::unique_ptr<io::RowSource> source = std::move(*opened);
    if (plan.per_file) {
      Result<std::unique_ptr<io::PredictionWriter>> created =
          io::create_prediction_writer(plan.paths[file_index], plan.formats[file_index], columns);
      if (!created.ok()) {
        remove_committed();
        return created.status();
      }
      writer = std::move(*created);
    }
    // Any error from here on leaves no output: the writer's temporary goes
    // with it, and completed parts are removed.
    auto run_file = [&]() -> Status {
      bytes_total += source->bytes_total();
      const uint64_t bytes_before = bytes_done;
      for (;;) {
        rows.clear();
        size_t got = 0;
        {
          StageTimer timer(metrics, "read");
          INFERCOST_ASSIGN_OR_RETURN(got, source->next(kChunkRows, rows));
        }
        if (got == 0) break;
        const size_t n = rows.size();
        if (rows.is_null.size() != n) rows.is_null.resize(n, 0);
        {
          StageTimer timer(metrics, "tokenize");
          tokenize_chunk(tokenizer, rows, ids, errors, metrics.threads);
        }
        kept.clear();
        dropped.assign(n, 0);
        for (size_t i = 0; i < n; ++i) {
          if (rows.is_null[i]) {
            ++metrics.rows_null;
            continue;
          }
          if (errors[i].ok()) {
            kept.push_back(i);
            continue;
          }
          Status located = errors[i].with_context(path + ": " + source->location_unit() + " " +
                                                  std::to_string(rows.lines[i]));
          if (options.on_bad_row == io::OnBadRow::kFail) return located;
          if (metrics.first_skip_reason.empty()) metrics.first_skip_reason = located.to_string();
          ++metrics.rows_skipped;
          dropped[i] = 1;
        }
        chunk_probs.assign(n * static_cast<size_t>(n_labels), 0.0f);
        for (size_t start = 0; start < kept.size(); start += static_cast<size_t>(options.batch_size)) {
          const size_t end = std::min(kept.size(), start + static_cast<size_t>(options.batch_size));
          batch.batch = static_cast<int>(end - start);
          batch.seq_len = 0;
          for (size_t k = start; k < end; ++k)
            batch.seq_len = std::max<int>(batch.seq_len, ids[kept[k]].size());
          batch.ids.assign(static_cast<size_t>(batch.batch) * batch.seq_len, tokenizer.pad_id());
          batch.lengths.resize(batch.batch);
          for (size_t k = start; k < end; ++k) {
            const auto& row_ids = ids[kept[k]];
            const size_t b = k - start;
            std::copy(row_ids.begin(), row_ids.end(), batch.ids.begin() + b * batch.seq_len);
            batch.lengths[b] = static_cast<int32_t>(row_ids.size());
            metrics.tokens += static_cast<int64_t>(row_ids.size());
            if (static_cast<int>(row_ids.size()) >= options.max_length) ++metrics.rows_at_max_length;
          }
          metrics.padded_tokens += batch.padded_tokens();
          metrics.computed_tokens += engine->skips_padding() ? batch.real_tokens() : batch.padded_tokens();
          ++metrics.batches;
          StageTimer timer(metrics, "infer");
          INFERCOST_ASSIGN_OR_RETURN(backend::Logits logits, engine->classify(batch));
          if (logits.rows != batch.batch || logits.labels != n_labels) {
            return internal_error("backend returned logits of the wrong shape");
          }
          softmax_rows(logits.values.data(), logits.rows, n_labels);
          for (size_t k = start; k < end; ++k) {
            std::copy_n(logits.values.begin() + static_cast<ptrdiff_t>((k - start) * n_labels), n_labels,
                        chunk_probs.begin() + static_cast<ptrdiff_t>(kept[k] * n_labels));
          }
          metrics.rows += batch.batch;
        }
        {
          StageTimer timer(metrics, "write");
          out_texts.clear();
          out_null.clear();
          out_probs.clear();
          for (size_t i = 0; i < n; ++i) {
            if (dropped[i]) continue;
            out_texts.push_back(options.keep_text ? std::move(rows.texts[i]) : std::string());
            out_null.push_back(rows.is_null[i]);
            out_probs.insert(out_probs.end(), chunk_probs.begin() + static_cast<ptrdiff_t>(i * n_labels),
                             chunk_probs.begin() + static_cast<ptrdiff_t>((i + 1) * n_labels));
          }
          INFERCOST_RETURN_IF_ERROR(writer->write(out_texts, out_null, out_probs));
        }
        bytes_done = bytes_before + source->bytes_read();
        if (options.progress) options.progress(metrics.rows + metrics.rows_null, bytes_done, bytes_total);
      }
      if (source->rows_skipped() > 0 && metrics.first_skip_reason.empty()) {
        metrics.first_skip_reason = source->first_skip_reason().to_string();
      }
      metrics.rows_skipped += source->rows_skipped();
      if (plan.per_file) {
        StageTimer timer(metrics, "write");
        INFERCOST_RETURN_IF_ERROR(writer->close());
        committed.push_back(plan.paths[file_index]);
        writer.reset();
      }
      return Status::ok_status();
    };
    Status status = run_file();
    if (!status.ok()) {
      writer.reset();
      remove_committed();
      return status;
    }
  }
  if (!plan.per_file) {
    StageTimer timer(metrics, "write");
    INFERCOST_RETURN_IF_ERROR(writer->close());
  }
  metrics.output_files = plan.per_file ? static_cast<int64_t>(committed.size()) : 1;
  metrics.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  metrics.peak_rss_bytes = peak_rss_bytes();
  return metrics;
}

}  // namespace infercost::pipeline
