// A checkpoint's tensors by their HF names, read or only checked and counted:
// what weights.cc and the families' read_weights share. Private to src/model.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "model/safetensors.h"
#include "model/weights.h"

namespace infercost::model {

struct CheckpointNames;

// Looks tensors up by their HF name, trying legacy aliases (TF-era BERT
// checkpoints say LayerNorm.gamma/beta) and, for base-model checkpoints, the
// name without the "distilbert."/"bert." prefix. Errors name the canonical name.
// Without a file (a header alone), each tensor is found and checked as reading
// would check it, and only counted: read() then gives an empty vector.
class TensorSource {
 public:
  TensorSource(const SafeTensorsFile& file, std::string prefix)
      : tensors_(file.tensors()), path_(file.path()), file_(&file), prefix_(std::move(prefix)) {}
  TensorSource(const SafeTensorsHeader& header, std::string path, std::string prefix)
      : tensors_(header.tensors), path_(std::move(path)), prefix_(std::move(prefix)) {}

  Result<std::vector<float>> read(const std::string& name, std::vector<int64_t> shape) {
    for (const std::string& candidate : candidates(name)) {
      auto it = tensors_.find(candidate);
      if (it == tensors_.end()) continue;
      if (file_) return file_->read_f32(candidate, shape);
      INFERCOST_RETURN_IF_ERROR(check_f32_tensor(path_, it->second, shape));
      counted_ += it->second.numel();
      return std::vector<float>();
    }
    return not_found(path_ + ": tensor '" + name + "' not found");
  }

  Status linear(const std::string& name, int out, int in, Linear& l) {
    l.out = out;
    l.in = in;
    INFERCOST_ASSIGN_OR_RETURN(l.weight, read(name + ".weight", {out, in}));
    INFERCOST_ASSIGN_OR_RETURN(l.bias, read(name + ".bias", {out}));
    return Status();
  }

  Status layer_norm(const std::string& name, int hidden, LayerNormWeights& ln) {
    INFERCOST_ASSIGN_OR_RETURN(ln.gamma, read(name + ".weight", {hidden}));
    INFERCOST_ASSIGN_OR_RETURN(ln.beta, read(name + ".bias", {hidden}));
    return Status();
  }

  // A bias the config says the checkpoint has (read), or has not (zeros,
  // counted in `zero_filled`).
  Result<std::vector<float>> bias(const std::string& name, bool present, int size, size_t& zero_filled) {
    if (present) return read(name, {size});
    zero_filled += static_cast<size_t>(size);
    return file_ ? std::vector<float>(static_cast<size_t>(size), 0.0f) : std::vector<float>();
  }

  bool has(const std::string& name) const {
    for (const std::string& candidate : candidates(name)) {
      if (tensors_.count(candidate)) return true;
    }
    return false;
  }

  // The elements of the tensors read() found and checked without a file.
  int64_t counted() const { return counted_; }

 private:
  std::vector<std::string> candidates(const std::string& name) const {
    std::vector<std::string> out{name};
    auto ends_with = [&](const std::string& s, const std::string& suffix) {
      return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
    };
    if (ends_with(name, ".weight")) out.push_back(name.substr(0, name.size() - 7) + ".gamma");
    if (ends_with(name, ".bias")) out.push_back(name.substr(0, name.size() - 5) + ".beta");
    if (!prefix_.empty() && name.rfind(prefix_, 0) == 0) {
      size_t n = out.size();
      for (size_t i = 0; i < n; ++i) out.push_back(out[i].substr(prefix_.size()));
    }
    return out;
  }

  const std::map<std::string, TensorInfo>& tensors_;
  std::string path_;
  const SafeTensorsFile* file_ = nullptr;
  std::string prefix_;
  int64_t counted_ = 0;
};

// What a family reads into a layer after BERT's tensors (DeBERTa's position
// projections), at `p` (the layer's prefix).
using ReadLayerExtra = std::function<Status(const std::string& p, EncoderLayerWeights& l)>;
// Every layer of `w` (c.num_layers of them): post-norm layers in BERT's
// layout under the names `n` gives, each followed by `extra` where given.
Status read_bert_layers(TensorSource& src, const ModelConfig& c, const CheckpointNames& n, EncoderWeights& w,
                        const ReadLayerExtra& extra = nullptr);
// The head's first layer and the classifier; without `classifier` (an
// encoder without a head), the first layer where the checkpoint has it
// (BERT's pooler) and no output layer.
Status read_head(TensorSource& src, const ModelConfig& c, const CheckpointNames& n, bool classifier,
                 ClassifierHeadWeights& head);
// Every tensor of an encoder in BERT's layout (DistilBERT, BERT, RoBERTa)
// under the names `n`, and its head (read_head says what `classifier` changes).
Result<EncoderWeights> read_bert_layout_weights(TensorSource& src, const ModelConfig& c,
                                                const CheckpointNames& n, bool classifier);

}  // namespace infercost::model
