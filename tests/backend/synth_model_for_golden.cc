// synth_model_for_golden --preset P --seed N --out DIR: model::synthesize_model
// with the flags of `infercost model synth`, so tools/gen_model_golden.py can
// run without the full CLI.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "model/synth.h"

int main(int argc, char** argv) {
  infercost::model::SynthOptions opts;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--preset") == 0)
      opts.preset = argv[i + 1];
    else if (std::strcmp(argv[i], "--seed") == 0)
      opts.seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (std::strcmp(argv[i], "--out") == 0)
      opts.out_dir = argv[i + 1];
    else {
      std::fprintf(stderr, "unknown flag %s\n", argv[i]);
      return 2;
    }
  }
  const infercost::Status st = infercost::model::synthesize_model(opts);
  if (!st.ok()) {
    std::fprintf(stderr, "%s\n", st.to_string().c_str());
    return 1;
  }
  return 0;
}
