// Printing a plan (make_plan's result): the text `infercost plan` writes to
// stdout, and the same content as JSON (--json).
#pragma once

#include <string>

#include "plan/plan.h"

namespace infercost::plan {

inline constexpr const char* kPlanSchema = "infercost.plan/1";

// The plan for a reader: inputs, work, predictions, unmeasured instances and
// notes, as plain text.
std::string print_text(const PlanResult& plan);
// The same content as JSON (schema kPlanSchema).
std::string print_json(const PlanResult& plan);

}  // namespace infercost::plan
