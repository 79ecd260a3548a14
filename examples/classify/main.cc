// Classifies the texts on its command line with a model directory, through the
// installed engine (README "C++"): infercost-classify MODEL_DIR TEXT...
#include <cstdio>
#include <string_view>
#include <vector>

#include "infercost/classifier.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s MODEL_DIR TEXT...\n", argv[0]);
    return 2;
  }
  infercost::ModelOptions options;  // CPU, all cores, fp32 unless the CPU has bf16
  options.max_length = 128;         // tokens per text, longer ones truncated
  auto classifier = infercost::Classifier::open(argv[1], options);
  if (!classifier.ok()) {
    std::fprintf(stderr, "%s\n", classifier.status().to_string().c_str());
    return 1;
  }
  const std::vector<std::string_view> texts(argv + 2, argv + argc);
  auto out = (*classifier)->classify(texts);
  if (!out.ok()) {
    std::fprintf(stderr, "%s\n", out.status().to_string().c_str());
    return 1;
  }
  const std::vector<std::string>& labels = (*classifier)->labels();
  for (size_t i = 0; i < out->rows(); ++i) {
    const int label = out->label[i];
    std::printf("%s\t%.4f\t%.*s\n", labels[label].c_str(), out->scores[i * out->labels + label],
                int(texts[i].size()), texts[i].data());
  }
  std::fprintf(stderr, "%lld rows, %.1f rows/s\n",
               static_cast<long long>((*classifier)->last_call_metrics().rows),
               (*classifier)->last_call_metrics().rows_per_second());
  return 0;
}
