#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "core/numbers.h"
#include "engine/head.h"
#include "engine/model_info.h"
#include "io/prediction_writer.h"
#include "model/describe.h"
#include "model/family.h"
#include "model/model_dir.h"
#include "model/program.h"
#include "model/synth.h"

namespace infercost::cli {

namespace {

struct ModelFlags {
  std::string dir;
  std::string out;
  std::string preset = "distilbert-base";
  uint64_t seed = 1;
  std::string tokenizer;
  bool json = false;
};

constexpr const char* kSyntheticNote =
    "note: this model is synthetic (random weights): its speed is real, its sentiments are not.";

// model info's lines on a rotary or relative-position encoder's positions and attention.
void print_positions_and_attention(const model::ModelConfig& c) {
  if (!c.rope_theta.empty()) {
    std::string global, local;
    int window = 0;
    double global_theta = 0, local_theta = 0;
    for (int i = 0; i < c.num_layers; ++i) {
      std::string& list = c.global_layer(i) ? global : local;
      list += fmt::format("{}{}", list.empty() ? "" : ",", i);
      (c.global_layer(i) ? global_theta : local_theta) = c.rope_theta[static_cast<size_t>(i)];
      if (!c.global_layer(i)) window = c.attention_window[static_cast<size_t>(i)];
    }
    std::printf("positions       rotary, theta %g (global layers)%s\n", global_theta,
                local.empty() ? "" : fmt::format(", {:g} (local)", local_theta).c_str());
    std::printf(
        "attention       global in layers %s%s\n", global.empty() ? "none" : global.c_str(),
        local.empty() ? "" : fmt::format("; local ({} tokens each side) in {}", window, local).c_str());
  }
  if (c.relative_attention) {
    const std::string terms = c.c2p && c.p2c ? "c2p, p2c" : c.c2p ? "c2p" : c.p2c ? "p2c" : "content only";
    const std::string span = c.position_buckets > 0
                                 ? fmt::format("{} log buckets over distances up to {}", c.position_buckets,
                                               c.max_relative_positions)
                                 : fmt::format("distances up to {}", c.max_relative_positions);
    std::printf("attention       disentangled (%s), relative positions: %s%s\n", terms.c_str(), span.c_str(),
                c.share_att_key ? ", shared key/query projections" : "");
  }
}

// The steps every backend runs for the model (model::forward_program): its
// first layer, which the others repeat, and the output `infercost run` or
// `infercost embed` gives; a bare encoder's steps stop at its last states.
void print_forward_program(const model::ModelDescription& m) {
  const model::ModelConfig& c = m.config;
  std::optional<Pooling> pooling;
  if (!m.classification_head) pooling = m.embedding ? m.embedding->pooling : Pooling::kMean;
  const model::ForwardProgram program = model::forward_program(c, pooling);
  const bool output = m.classification_head || m.embedding.has_value();
  std::printf("forward         %zu steps per row%s\n%s",
              output ? program.steps.size() : model::encoder_steps(program),
              output ? "" : " (no head: embed pools the states)",
              model::describe(program, c, output ? SIZE_MAX : model::encoder_steps(program)).c_str());
}

// model info's head lines: the labels and the head function run applies, or why there is no head.
void print_head(const model::ModelDescription& m) {
  const model::ModelConfig& c = m.config;
  if (m.classification_head) {
    std::string labels;
    for (int i = 0; i < c.num_labels(); ++i) {
      labels += fmt::format("{}{}={}", i ? ", " : "", i, c.labels[static_cast<size_t>(i)]);
    }
    std::printf("labels          %s\n", labels.c_str());
    // What `infercost run` applies to the logits without --function.
    const engine::HeadChoice head = engine::default_head_function(c);
    std::printf(
        "head function   %s (%s)%s\n", engine::head_function_name(head.function), head.reason.c_str(),
        engine::writes_label_set(head.function, c.num_labels()) ? ", multi-label: a 'labels' column" : "");
  } else {
    // What `infercost run` says of it (model::check_classification_head), less the directory.
    const std::string prefix = m.dir + ": ";
    const std::string why = m.no_head.rfind(prefix, 0) == 0 ? m.no_head.substr(prefix.size()) : m.no_head;
    std::printf("head            none: %s\n", why.c_str());
  }
}

// model info's embedding line: what embed does with the directory, or why it refuses it.
void print_embedding(const model::ModelDescription& m) {
  const model::ModelConfig& c = m.config;
  const model::TokenizerDescription& t = m.tokenizer;
  if (m.embedding) {
    const model::EmbeddingConfig& e = *m.embedding;
    std::string max_seq;
    if (const int used = model::sentence_transformers_max_length(e, c.max_positions()); used > 0) {
      max_seq = fmt::format(", max_seq_length {}", e.max_seq_length);
      if (e.max_seq_length > c.max_positions()) {
        max_seq += fmt::format(" (embed reads {} tokens, the model's positions)", used);
      } else if (used > t.max_length) {
        max_seq +=
            fmt::format(" (embed reads {} tokens, past the tokenizer's {}, as sentence-transformers does)",
                        used, t.max_length);
      }
    }
    std::string prompt =
        e.default_prompt_name.empty() ? "" : fmt::format(", default prompt '{}'", e.default_prompt_name);
    std::printf("embedding       %s pooling, %s%d dimensions%s%s (sentence-transformers modules.json)\n",
                model::pooling_name(e.pooling), e.normalize ? "normalized, " : "", e.dimensions,
                max_seq.c_str(), prompt.c_str());
  } else if (!m.embedding_refused.empty()) {
    std::printf("embedding       refused: %s\n", m.embedding_refused.c_str());
  }
}

void run_info(const ModelFlags& flags) {
  Result<model::ModelDescription> described = model::describe_model_dir(flags.dir);
  if (!described.ok()) fail(described.status());
  const model::ModelDescription& m = *described;
  if (flags.json) {
    std::printf("%s\n", engine::model_info_json(m).c_str());
    return;
  }
  const model::ModelConfig& c = m.config;
  std::printf("model           %s\n", m.dir.c_str());
  std::printf("name            %s\n", c.name.c_str());
  std::printf("architecture    %s (model_type %s)\n", model::architecture_name(c).c_str(),
              c.model_type.c_str());
  std::printf("layers          %d\n", c.num_layers);
  std::printf("hidden          %d (%d heads x %d)\n", c.hidden_size, c.num_heads, c.head_dim());
  std::printf("ffn             %d, %s%s\n", c.intermediate_size, model::activation_name(c.ffn_activation),
              c.glu ? " GLU" : "");
  std::printf("vocab           %d\n", c.vocab_size);
  std::printf("max positions   %d\n", c.max_positions());
  print_positions_and_attention(c);
  print_forward_program(m);
  if (model::family_of(c).shows_token_types) std::printf("token types     %d\n", c.type_vocab_size);
  std::printf("layer norm eps  %g\n", static_cast<double>(c.layer_norm_eps));
  std::printf("parameters      %s\n", group_thousands(m.parameters).c_str());
  std::printf("weights dtype   %s (model.safetensors)\n", m.weights_dtype.c_str());
  std::printf("precision       %s\n", engine::default_precision_text().c_str());
  print_head(m);
  const model::TokenizerDescription& t = m.tokenizer;
  std::printf("tokenizer       %s (%s), %zu tokens, max length %d\n", text::tokenizer_kind_name(t.kind),
              t.source.c_str(), t.vocab_size, t.max_length);
  if (t.normalizer) {
    const model::NormalizerDescription& n = *t.normalizer;
    std::printf("normalizer      lowercase %s, strip accents %s, split CJK %s\n", n.lowercase ? "yes" : "no",
                n.strip_accents ? "yes" : "no", n.split_cjk ? "yes" : "no");
  }
  print_embedding(m);
  if (c.synthetic) {
    std::printf("synthetic       yes (preset %s, seed %llu)\n", c.synthetic_preset.c_str(),
                static_cast<unsigned long long>(c.synthetic_seed));
    std::printf("%s\n", kSyntheticNote);
  } else {
    std::printf("synthetic       no\n");
  }
}

void run_synth(const ModelFlags& flags) {
  auto start = std::chrono::steady_clock::now();
  model::SynthOptions options;
  options.out_dir = flags.out;
  options.preset = flags.preset;
  options.seed = flags.seed;
  options.tokenizer = flags.tokenizer;
  Status s = model::synthesize_model(options);
  if (!s.ok()) fail(s.with_context("model synth"));
  model::LoadOptions load;
  load.load_weights = false;
  Result<model::LoadedModel> loaded = model::load_model_dir(flags.out, load);
  if (!loaded.ok()) fail(loaded.status().with_context("model synth: reading back"));
  const model::ModelConfig& c = loaded->config;
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf(
      "wrote %s: preset %s, seed %llu (%d layers, hidden %d, %d heads, ffn %d, vocab %d), in %.1f s\n",
      flags.out.c_str(), flags.preset.c_str(), static_cast<unsigned long long>(flags.seed), c.num_layers,
      c.hidden_size, c.num_heads, c.intermediate_size, c.vocab_size, seconds);
  std::string files;
  for (const char* name : {"vocab.txt", "vocab.json", "merges.txt", "tokenizer.json", "tokenizer_config.json",
                           "special_tokens_map.json"}) {
    if (std::filesystem::exists(flags.out + "/" + name)) files += std::string(", ") + name;
  }
  std::printf("  config.json, model.safetensors (%s)%s\n", loaded->weights_dtype.c_str(), files.c_str());
  std::printf("%s\n", kSyntheticNote);
}

}  // namespace

void define_model(CLI::App* model) {
  auto flags = std::make_shared<ModelFlags>();
  model->require_subcommand(1);

  CLI::App* info = model->add_subcommand("info", "Describe a model directory (config, weights, tokenizer)");
  info->add_option("dir", flags->dir,
                   "Model directory (config.json, model.safetensors, vocab.txt/tokenizer.json)")
      ->required();
  info->add_flag("--json", flags->json,
                 "Print the description as one JSON object (the keys of infercost.model_info(), with "
                 "classification_head and no_head)");
  info->callback([flags] { run_info(*flags); });

  std::string presets;
  for (const auto& p : model::synth_presets()) presets += (presets.empty() ? "" : ", ") + p;
  CLI::App* synth = model->add_subcommand(
      "synth",
      "Write a synthetic model (exact shapes, deterministic random weights) that HF transformers loads");
  synth->add_option("--out", flags->out, "Output directory (created if needed)")->required();
  synth->add_option("--preset", flags->preset, "One of: " + presets)->capture_default_str();
  synth->add_option("--seed", flags->seed, "Weight seed; the same seed gives identical files")
      ->capture_default_str();
  synth->add_option("--tokenizer", flags->tokenizer,
                    "Tokenizer files to copy in: a tokenizer.json, or a folder with one (roberta-base: or "
                    "vocab.json + merges.txt; BERT presets: or vocab.txt). Default: ones built from the "
                    "project's tweet word list (BERT: WordPiece vocab.txt; roberta-base: byte-level BPE "
                    "vocab.json + merges.txt; xlm-roberta-base: Unigram tokenizer.json), plausible tokens "
                    "per tweet, not a real vocabulary");
  synth->callback([flags] { run_synth(*flags); });
}

}  // namespace infercost::cli
