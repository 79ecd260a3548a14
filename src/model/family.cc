#include "family.h"

#include <array>

namespace infercost::model {

// Each defined in its file of src/model/families/.
extern const Family kDistilBertFamily;
extern const Family kBertFamily;
extern const Family kRobertaFamily;
extern const Family kModernBertFamily;
extern const Family kDebertaFamily;

namespace {

// The registry, in the order error messages and `model synth` list them.
const std::array<const Family*, 5> kFamilies = {&kDistilBertFamily, &kBertFamily, &kRobertaFamily,
                                                &kModernBertFamily, &kDebertaFamily};

}  // namespace

std::span<const Family* const> families() {
  return kFamilies;
}

const Family* find_family(std::string_view model_type) {
  for (const Family* f : kFamilies) {
    for (const FamilyModelType& t : f->model_types) {
      if (t.model_type == model_type) return f;
    }
  }
  return nullptr;
}

const Family& family_of(const ModelConfig& config) {
  for (const Family* f : kFamilies) {
    if (f->architecture == config.architecture) return *f;
  }
  return *kFamilies.front();
}

std::string supported_model_types() {
  std::string out;
  for (const Family* f : kFamilies) {
    for (const FamilyModelType& t : f->model_types)
      out += (out.empty() ? "" : ", ") + std::string(t.model_type);
  }
  return out;
}

void apply_family(const Family& family, ModelConfig& config) {
  config.architecture = family.architecture;
  if (!family.head_activation_from_config) config.classifier_activation = family.head_activation;
  config.padding_positions = family.padding_positions;
}

}  // namespace infercost::model
