// The CPU backend in the parity suite: fp32 within the goldens' own tolerance
// (1e-4) of HF transformers, ModernBERT included.
#include "parity_suite.h"

namespace infercost::backend::testing {
namespace {

ParityTarget cpu_target() {
  ParityTarget t;
  t.name = "cpu";
  t.make = [] { return create_backend("cpu", BackendOptions{}); };
  t.tolerance = 1e-4;
  return t;
}

INFERCOST_BACKEND_PARITY(Cpu, cpu_target());
INFERCOST_BACKEND_PARITY_MODERNBERT(Cpu, cpu_target());
INFERCOST_BACKEND_PARITY_DEBERTA(Cpu, cpu_target());

}  // namespace
}  // namespace infercost::backend::testing
