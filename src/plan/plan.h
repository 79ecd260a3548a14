// `infercost plan`: before spending money, predict from benchmark records
// the time and cost of classifying these inputs on every instance of the
// price lists, per batching policy and precision, and say which numbers are
// measured, which are projected, from which record and how (docs/plan.md).
//
// Prediction: the plan's work is the FLOPs of the scanned rows as a policy
// computes them (work.h); a record's rate is the FLOPs of its own run over its
// median wall time; predicted seconds = plan FLOPs / rate; cost = seconds x
// hourly price. A prediction is "measured" when the record ran these very
// inputs (same rows, tokens, bytes and files), with the same model shape,
// batching policy and max length, and no --corpus-rows projection; when both
// the record and the scan carry a content hash, the hashes must match too.
// Its time is then the record's median wall time.
//
// Price: an instance of a price list is priced at that list's on-demand price
// for one machine. Only a record priced for that very instance from that very
// list keeps its own terms (spot discount, platform surcharge, machines) on
// the list's price; an instance no loaded list holds is priced as its record
// was. Break-even figures price the unmeasured instance with the same terms as
// the cheapest prediction (cost::hourly_usd on both sides).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cost/prices.h"
#include "infercost/status.h"
#include "model/embedding.h"
#include "plan/scan.h"
#include "plan/work.h"
#include "record/record.h"

namespace infercost::plan {

// A benchmark record and where it was read ("results.jsonl: line 3").
using record::SourcedRecord;

struct PlanOptions {
  std::vector<cost::PriceList> price_lists;  // searched in order (cost::price_lists_with)
  std::string price_list;                    // only this list ("" = all)
  int64_t corpus_rows = 0;                   // 0: the scanned rows
  ModelShape model;
  std::string model_name;
  bool model_synthetic = false;
  // For the `infercost bench` command suggested for unmeasured instances.
  std::vector<std::string> inputs;
  std::string model_dir;
  // Whether this build can run `--device cuda`. Without it, the bench
  // command suggested for a GPU instance carries a note saying so.
  bool cuda_backend = false;
  // An embedding job (`infercost plan --embed`): the vector's dimensions; 0
  // for a classification run. The work is the encoder's either way (the
  // formula has no head), so records of runs of the same encoder predict it.
  int embedding_dimensions = 0;
  std::optional<Pooling> pooling;  // the --pooling asked for, which the suggested `bench --embed` passes on
};

// A record a prediction used.
struct RecordUse {
  std::string origin;
  // The configuration it ran (record::setup_of; unpriced: each prediction
  // has its own price), and its batch size.
  record::Setup setup;
  int batch_size = 0;
  std::string sweep_id;
  int point = 0, points = 0;
  std::string started_at;
  ModelShape shape;
  int64_t rows = 0, tokens = 0, computed_tokens = 0;
  RecordRate rate;
  bool skips_padding = true;
  std::string skips_padding_why;
};

struct Prediction {
  // Instance name, or "<machine> (unpriced)" for records without an instance.
  std::string target;
  std::string instance;    // "" when unpriced
  std::string price_list;  // "" when unpriced
  bool priced = false;
  // usd_per_hour = cost::hourly_usd(one machine at on_demand_usd_per_hour, terms).
  double usd_per_hour = 0;
  double on_demand_usd_per_hour = 0;  // one machine, as the list (or the record) gives it
  cost::Pricing terms;                // on demand, one machine unless record_terms
  bool record_terms = false;          // the record's own spot discount, surcharge and machines
  std::string price_how;
  std::string batching;   // the plan's policy: "seed" or "tokens"
  std::string precision;  // as measured
  int64_t rows = 0;       // rows predicted (corpus)
  double flops = 0;       // work of these rows under the policy
  std::string flops_how;
  double seconds = 0;
  double usd = 0;                   // priced only
  double usd_per_million_rows = 0;  // priced only
  bool measured = false;            // the time is the record's own; else projected
  std::string how;                  // how `seconds` was obtained
  bool model_differs = false;       // the record's model has another shape
  bool batching_differs = false;    // the record ran the other policy
  size_t record = 0;                // index into PlanResult::records (0-based; [record + 1] in the text)
};

struct Unmeasured {
  std::string instance, price_list;
  double usd_per_hour = 0;  // the list's on-demand price of one machine
  int gpus = 0;
  std::string gpu;
  int vcpus = 0;
  std::string memory;
  bool has_break_even = false;  // false when no priced prediction exists
  // This instance's hourly price under the cheapest prediction's terms.
  double break_even_usd_per_hour = 0;
  double deadline_seconds = 0;  // finishing later than this costs more than the cheapest prediction
  double break_even_rows_per_second = 0;
  std::string bench_command;
  std::string bench_note;  // e.g. a GPU instance's command needs a CUDA backend this build lacks
};

struct PlanResult {
  ScanResult scan;
  ModelShape model;
  // An embedding job: the vector's dimensions (0: a classification run) and
  // the vectors' size before compression, corpus_rows x dimensions float32.
  int embedding_dimensions = 0;
  double vector_bytes = 0;
  std::string model_name;
  bool model_synthetic = false;
  std::string price_list;   // the --price-list restriction, if any
  int64_t corpus_rows = 0;  // rows predicted
  double scale = 1;         // corpus_rows / scanned rows
  // FLOPs of the scanned rows per policy (not scaled).
  double seed_flops = 0;                // padded to each file's longest row
  double tokens_flops = 0;              // real lengths (devices that skip padding)
  double tokens_padded_flops = 0;       // batch-padded lengths (devices that compute padding)
  std::vector<RecordUse> records;       // records the predictions used
  std::vector<Prediction> predictions;  // priced by cost, then unpriced by time
  std::vector<Unmeasured> unmeasured;
  // The prediction the unmeasured instances must beat (index into
  // predictions), when one is priced.
  bool has_cheapest = false;
  size_t cheapest = 0;
  // `infercost bench` for these inputs and model, with NAME for the instance.
  std::string bench_template;
  int64_t records_read = 0;
  std::vector<std::string> notes;  // records left out and why, assumptions
};

// True when some record's data has the scan's rows, tokens, bytes and files
// and a content hash: then hash_inputs() can tell whether it ran these inputs.
bool needs_content_hash(const ScanResult& scan, const std::vector<SourcedRecord>& records);

// OK when `name` is empty or names one of `lists`; else kInvalidArgument
// listing the known lists.
Status check_price_list(const std::vector<cost::PriceList>& lists, const std::string& name);

// The predictions for `scan` from `records` (see the file comment).
// kInvalidArgument for an unknown --price-list.
Result<PlanResult> make_plan(ScanResult scan, const std::vector<SourcedRecord>& records,
                             const PlanOptions& options);

// "on demand, one machine"; "spot discount 0.3, platform $0.5/h per machine,
// 2 machines".
std::string terms_text(const cost::Pricing& terms);

}  // namespace infercost::plan
