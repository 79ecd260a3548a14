// Model-only throughput of the CUDA backend: full-length batches (every row
// `seq` tokens, so no padding question) through Backend::classify on one GPU,
// in each precision, timed on the host around the synchronous classify()
// (token ids up, logits down included) after warm-up runs (CUDA graphs are
// captured then). Model FLOPs per row: layers x (2L(4h^2 + 2hf) + 4L^2 h), the
// formula of `infercost run --metrics` (model_flops); --peak-tflops (the bf16
// GEMM ceiling from cuda_gemm_peak) adds the share of it reached.
//
//   cuda_encoder_bench [--model DIR] [--device cuda:N] [--precisions bf16,fp16,fp32]
//                      [--shapes 256x128,64x64] [--reps N] [--warmup N] [--peak-tflops X]
//                      [--no-graphs]
//
// Without --model it synthesizes DistilBERT-base (`infercost model synth`,
// seed 1) in a temporary folder. One JSON line per precision and shape on
// stdout; exit 1 when any of them failed (the reason on stderr and in an
// "error" line).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "bench_util.h"
#include "core/file.h"
#include "engine/flops.h"
#include "model/model_dir.h"
#include "model/synth.h"

namespace {

namespace backend = infercost::backend;
using infercost::bench::arg_flag;
using infercost::bench::arg_str;
using infercost::bench::median;
using infercost::bench::now_s;

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, sep)) {
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

struct Shape {
  int batch = 0, seq = 0;
};

// The run metrics' FLOP model (src/engine/flops.h).
double row_flops(const infercost::model::ModelConfig& c, double length) {
  return infercost::engine::encoder_row_flops(infercost::engine::encoder_shape(c), length);
}

std::string json_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (static_cast<unsigned char>(ch) < 0x20) {
      out += fmt::format("\\u{:04x}", int(static_cast<unsigned char>(ch)));
    } else {
      out += ch;
    }
  }
  return out;
}

void print_error(const std::string& precision, const Shape* shape, const std::string& why) {
  fmt::print(stderr, "cuda_encoder_bench: {}{}: {}\n", precision,
             shape ? fmt::format(" {}x{}", shape->batch, shape->seq) : "", why);
  fmt::print(
      "{{\"bench\": \"cuda_encoder_bench\", \"precision\": \"{}\", \"batch\": {}, \"seq\": {}, "
      "\"error\": \"{}\"}}\n",
      precision, shape ? shape->batch : 0, shape ? shape->seq : 0, json_escape(why));
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (arg_flag(argc, argv, "--help") || arg_flag(argc, argv, "-h")) {
    fmt::print(
        "cuda_encoder_bench [--model DIR] [--device cuda:N] [--precisions bf16,fp16,fp32] [--shapes "
        "256x128,64x64]\n"
        "                   [--reps N] [--warmup N] [--peak-tflops X] [--no-graphs]\n"
        "Model-only CUDA backend throughput on full-length batches; one JSON line per precision and "
        "shape.\n");
    return 0;
  }
  const std::string device = arg_str(argc, argv, "--device", "cuda:0");
  const int reps = std::max(1, std::atoi(arg_str(argc, argv, "--reps", "20")));
  const int warmup = std::max(1, std::atoi(arg_str(argc, argv, "--warmup", "3")));
  const double peak_tflops = std::atof(arg_str(argc, argv, "--peak-tflops", "0"));
  std::vector<Shape> shapes;
  for (const std::string& s : split(arg_str(argc, argv, "--shapes", "256x128,64x64"), ',')) {
    Shape shape;
    char x = 0;
    std::istringstream in(s);
    if (!(in >> shape.batch >> x >> shape.seq) || x != 'x' || shape.batch <= 0 || shape.seq <= 0) {
      fmt::print(stderr, "--shapes: '{}' is not ROWSxTOKENS (e.g. 256x128)\n", s);
      return 2;
    }
    shapes.push_back(shape);
  }
  std::vector<backend::Precision> precisions;
  for (const std::string& p : split(arg_str(argc, argv, "--precisions", "bf16,fp16,fp32"), ',')) {
    auto parsed = backend::parse_precision(p);
    if (!parsed.ok()) {
      fmt::print(stderr, "--precisions: {}\n", parsed.status().to_string());
      return 2;
    }
    precisions.push_back(*parsed);
  }

  std::string model_dir = arg_str(argc, argv, "--model", "");
  infercost::TempDir temp;
  if (model_dir.empty()) {
    auto made = infercost::TempDir::create("cuda_encoder_bench");
    if (!made.ok()) {
      fmt::print(stderr, "cuda_encoder_bench: {}\n", made.status().to_string());
      return 1;
    }
    temp = std::move(made).value();
    infercost::model::SynthOptions synth;
    synth.out_dir = temp.path() + "/model";
    const infercost::Status st = infercost::model::synthesize_model(synth);
    if (!st.ok()) {
      fmt::print(stderr, "cuda_encoder_bench: synthesizing the model: {}\n", st.to_string());
      return 1;
    }
    model_dir = synth.out_dir;
  }
  auto loaded = infercost::model::load_model_dir(model_dir, infercost::model::LoadOptions{});
  if (!loaded.ok()) {
    fmt::print(stderr, "cuda_encoder_bench: {}: {}\n", model_dir, loaded.status().to_string());
    return 1;
  }
  const infercost::model::ModelConfig& config = loaded->config;
  for (const Shape& s : shapes) {
    if (s.seq > config.max_position_embeddings) {
      fmt::print(stderr, "--shapes: {} tokens exceed the model's {} positions\n", s.seq,
                 config.max_position_embeddings);
      return 2;
    }
  }

  bool failed = false;
  for (backend::Precision precision : precisions) {
    const std::string pname = backend::precision_name(precision);
    backend::BackendOptions options;
    options.precision = precision;
    options.cuda_graphs = !arg_flag(argc, argv, "--no-graphs");
    auto created = backend::create_backend(device, options);
    if (!created.ok()) {
      print_error(pname, nullptr, created.status().to_string());
      failed = true;
      continue;
    }
    std::unique_ptr<backend::Backend> be = std::move(created).value();
    const double t_prepare = now_s();
    const infercost::Status prepared = be->prepare(config, loaded->weights);
    const double prepare_s = now_s() - t_prepare;
    if (!prepared.ok()) {
      print_error(pname, nullptr, prepared.to_string());
      failed = true;
      continue;
    }
    for (const Shape& s : shapes) {
      backend::TokenBatch tb;
      tb.batch = s.batch;
      tb.seq_len = s.seq;
      std::mt19937 rng(uint32_t(11 + s.batch * 1000 + s.seq));
      // Ordinary word ids (past the special and single-character tokens).
      std::uniform_int_distribution<int32_t> id(1000, config.vocab_size - 1);
      tb.ids.resize(size_t(s.batch) * s.seq);
      for (int32_t& v : tb.ids) v = id(rng);
      tb.lengths.assign(size_t(s.batch), s.seq);

      std::string why;
      for (int i = 0; i < warmup && why.empty(); ++i) {
        auto out = be->forward(tb);
        if (!out.ok()) why = out.status().to_string();
      }
      std::vector<double> times;
      for (int i = 0; i < reps && why.empty(); ++i) {
        const double t0 = now_s();
        auto out = be->forward(tb);
        const double t = now_s() - t0;
        if (!out.ok()) {
          why = out.status().to_string();
        } else if (out->rows != s.batch || out->values.size() != size_t(s.batch) * out->width) {
          why = fmt::format("classify returned {} rows x {} labels for {} rows", out->rows, out->width,
                            s.batch);
        } else if (!std::all_of(out->values.begin(), out->values.end(),
                                [](float v) { return std::isfinite(v); })) {
          why = "classify returned non-finite logits";
        }
        times.push_back(t);
      }
      if (!why.empty()) {
        print_error(pname, &s, why);
        failed = true;
        continue;
      }
      const double t = median(times);
      const double flop = s.batch * row_flops(config, s.seq);
      const double tflops = flop / t / 1e12;
      std::string capacity = "null";
      if (auto cap = be->capacity(s.seq); cap.ok()) capacity = std::to_string(cap->max_tokens);
      fmt::print(
          "{{\"bench\": \"cuda_encoder_bench\", \"device\": \"{}\", \"backend\": \"{}\", \"precision\": "
          "\"{}\", "
          "\"batch\": {}, \"seq\": {}, \"reps\": {}, \"graphs\": {}, \"prepare_seconds\": {:.3f}, "
          "\"median_ms\": {:.4f}, \"best_ms\": {:.4f}, \"rows_per_second\": {:.1f}, \"tokens_per_second\": "
          "{:.1f}, "
          "\"model_flop_per_batch\": {:.6g}, \"tflops\": {:.2f}, \"peak_tflops\": {}, \"peak_percent\": {}, "
          "\"capacity_max_tokens\": {}}}\n",
          device, json_escape(be->name()), pname, s.batch, s.seq, reps,
          options.cuda_graphs ? "true" : "false", prepare_s, t * 1e3,
          *std::min_element(times.begin(), times.end()) * 1e3, s.batch / t, double(s.batch) * s.seq / t, flop,
          tflops, peak_tflops > 0 ? fmt::format("{:.1f}", peak_tflops) : "null",
          peak_tflops > 0 ? fmt::format("{:.1f}", 100.0 * tflops / peak_tflops) : "null", capacity);
      std::fflush(stdout);
    }
  }
  return failed ? 1 : 0;
}
