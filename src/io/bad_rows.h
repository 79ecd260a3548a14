// The bad-row policy every RowSource applies (see OnBadRow).
#pragma once

#include <cstdint>
#include <utility>

#include "infercost/status.h"
#include "io/rows.h"

namespace infercost::io {

// Counts skipped rows and keeps the first reason; under kFail hands the
// located error back instead.
class BadRows {
 public:
  explicit BadRows(OnBadRow policy) : policy_(policy) {}
  // OK when the row was skipped; the located error under kFail.
  Status handle(Status located) {
    if (policy_ == OnBadRow::kFail) return located;
    if (skipped_ == 0) first_ = std::move(located);
    ++skipped_;
    return Status();
  }
  int64_t skipped() const { return skipped_; }
  const Status& first() const { return first_; }

 private:
  OnBadRow policy_;
  int64_t skipped_ = 0;
  Status first_;
};

}  // namespace infercost::io
