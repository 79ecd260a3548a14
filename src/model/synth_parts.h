// What `model synth` (synth.cc) and the families' synth presets share: the
// deterministic random tensors, the tensors' HF names, BERT's layout and the
// project's WordPiece vocabulary. Private to src/model.
#pragma once

#include <cstdint>
#include <functional>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <utility>
#include <vector>

#include "infercost/status.h"
#include "model/config.h"
#include "model/weights.h"

namespace infercost::model {

struct CheckpointNames;

inline constexpr double kInitStd = 0.02;  // HF initializer_range

// Each tensor draws from its own stream (seed x name), so adding a tensor
// never changes the values of the others.
std::vector<float> normal_tensor(uint64_t seed, const std::string& name, size_t n, double stddev);

// A tensor written to model.safetensors under its HF name.
struct SynthTensor {
  std::string name;
  std::vector<int64_t> shape;
  const std::vector<float>* data;
};

// A random [out, in] linear (its stream named by `name`) with zero biases;
// a LayerNorm of ones and zeros.
Linear make_linear(uint64_t seed, const std::string& name, int out, int in);
LayerNormWeights make_ln(int h);
void add_linear(std::vector<SynthTensor>& out, const std::string& name, const Linear& l);
void add_ln(std::vector<SynthTensor>& out, const std::string& name, const LayerNormWeights& ln);
// Every layer of `w` (c.num_layers of them): post-norm layers in BERT's
// layout under `n`, random linears (streams named by their tensors),
// LayerNorms 1 / 0; each then given to `extra` where set (DeBERTa's position
// tables).
void make_bert_layers(uint64_t seed, const ModelConfig& c, const CheckpointNames& n, EncoderWeights& w,
                      const std::function<void(EncoderLayerWeights& l)>& extra = nullptr);
// Every layer of w under BERT's names (layer.N.).
void add_bert_layers(std::vector<SynthTensor>& tensors, const CheckpointNames& n, const EncoderWeights& w);
// Random weights of an encoder in BERT's layout (DistilBERT, BERT, RoBERTa)
// under the names `n` (the names double as PRNG stream names).
EncoderWeights make_bert_layout_weights(const ModelConfig& c, uint64_t seed, const CheckpointNames& n,
                                        std::vector<SynthTensor>& tensors);

// What the head's calibration draws its texts from: [first_word, end_word)
// between bos and eos. `tokens` is the BERT vocabulary (vocab.txt); the
// RoBERTa family's tokenizers are written from their own structures.
struct SynthVocab {
  std::vector<std::string> tokens;
  int32_t first_word = 0, end_word = 0;  // [first_word, end_word): lexicon words
  int32_t bos = 101, eos = 102;          // [CLS] and [SEP] in BERT's layout
  // Where set, the calibration draws these ids instead (the RoBERTa family's
  // whole-word tokens, which sit among the other pieces).
  std::vector<int32_t> word_ids;

  // Draws the lexicon words [first, end), or `ids` where set.
  void set_words(int32_t first, int32_t end, std::vector<int32_t> ids) {
    first_word = first;
    end_word = end;
    word_ids = std::move(ids);
  }
};

// The project's tokenizer files, built from the tweet lexicon, and the
// calibration's view of them.
struct SynthTokenizer {
  std::vector<std::pair<std::string, std::string>> files;  // name, contents
  SynthVocab calibration;

  // No files yet; the calibration's texts go between `bos` and `eos`.
  static SynthTokenizer framed(int32_t bos, int32_t eos) {
    SynthTokenizer t;
    t.calibration.bos = bos;
    t.calibration.eos = eos;
    return t;
  }
  // Adds tokenizer_config.json: `config` as HF writes it (indent 2, a final newline).
  void add_config(const nlohmann::ordered_json& config);
};

// BERT's vocabulary laid out as bert-base-uncased's: special tokens, the
// lexicon's characters and words, letter-pair filler up to `vocab_size`.
Result<SynthVocab> build_wordpiece_vocab(int vocab_size);
// That vocabulary as vocab.txt, with a tokenizer_config.json naming
// `tokenizer_class` (BertTokenizer, DistilBertTokenizer).
Result<SynthTokenizer> wordpiece_tokenizer(const ModelConfig& c, const char* tokenizer_class);

}  // namespace infercost::model
