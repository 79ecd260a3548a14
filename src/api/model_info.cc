#include "infercost/model_info.h"

#include "api/spelled.h"
#include "engine/encoder.h"
#include "engine/model_info.h"
#include "model/describe.h"

namespace infercost {

Result<ModelInfo> describe_model(const std::string& model_dir) {
  Result<model::ModelDescription> described = model::describe_model_dir(model_dir);
  if (!described.ok()) return api::spelled(described.status());
  const model::ModelDescription& m = *described;
  ModelInfo info;
  info.dir = m.dir;
  info.name = m.config.name;
  info.model_type = m.config.model_type;
  info.layers = m.config.num_layers;
  info.hidden_size = m.config.hidden_size;
  info.max_length = m.tokenizer.max_length;
  info.parameters = m.parameters;
  info.classification_head = m.classification_head;
  if (m.classification_head) info.labels = m.config.labels;
  info.default_task = engine::default_task(model_dir);
  info.synthetic = m.config.synthetic;
  info.json = engine::model_info_json(m);
  return info;
}

}  // namespace infercost
