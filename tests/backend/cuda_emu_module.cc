// The emulated GPU as a CUDA module the CLI loads (INFERCOST_CUDA_MODULE), so
// that tests run `infercost run --device cuda` end to end on the CPU
// (tests/cli/cuda_emu_cli_test.cc). The emulated device's settings come from
// the environment when the module is loaded:
//   INFERCOST_EMU_STICKY_AFTER_SYNCS=N  a sticky CUDA error after N stream
//                                       synchronizations (a GPU that fails mid-run).
#include <cstdlib>

#include "cuda_backend_emu.h"

namespace {

const bool configured = [] {
  if (const char* n = std::getenv("INFERCOST_EMU_STICKY_AFTER_SYNCS")) {
    infercost::backend::cuda_backend_emu::device().sticky_after_syncs = std::strtoll(n, nullptr, 10);
  }
  return true;
}();

}  // namespace
