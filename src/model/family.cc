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

Status unsupported_model_type(const std::string& model_type, const std::string& source) {
  for (const Family* f : kFamilies) {
    for (const RefusedModelType& r : f->refused_model_types) {
      if (r.model_type == model_type) return unsupported(source + ": " + std::string(r.message));
    }
  }
  return unsupported(source + ": model_type '" + model_type +
                     "' is not supported (supported families: " + supported_model_types() + ")");
}

const Family& family_of(const ModelConfig& config) {
  // No default: a new Architecture without its family is a compiler warning.
  switch (config.architecture) {
    case Architecture::kDistilBert: return kDistilBertFamily;
    case Architecture::kBert: return kBertFamily;
    case Architecture::kRoberta: return kRobertaFamily;
    case Architecture::kModernBert: return kModernBertFamily;
    case Architecture::kDebertaV2: return kDebertaFamily;
  }
  // Only a cast reaches here (a value no enumerator names): a broken invariant.
  detail::check_failed("config.architecture names a family", __FILE__, __LINE__);
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
  if (family.head_activation) config.classifier_activation = *family.head_activation;
  config.padding_positions = family.padding_positions;
  config.token_head_pre = family.token_head_pre;
}

}  // namespace infercost::model
