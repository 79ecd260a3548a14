#include "plan/plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>

namespace infercost::plan {

namespace {

// Quotes a word for a POSIX shell when it needs it.
std::string shell_word(const std::string& s) {
  if (!s.empty() && s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                        "@%+=:,./_-") == std::string::npos) {
    return s;
  }
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

constexpr const char* kNoCudaNote =
    "--device cuda needs the CUDA module (libinfercost_cuda.so), which this build does not have: build where "
    "nvcc is installed (without --device cuda it measures this instance's CPUs only)";

struct Usable {
  const SourcedRecord* source;
  RecordRate rate;
};

// Where a prediction's price comes from.
struct Target {
  std::string name;  // instance, or machine for unpriced
  const cost::PriceList* list = nullptr;
  const cost::Instance* instance = nullptr;
  bool record_priced = false;  // instance not in the lists: priced as the record was
  bool priced = true;
  std::vector<const Usable*> candidates;
};

bool same_counts(const record::Record& r, const ScanResult& scan) {
  return r.data.rows == scan.rows && r.data.tokens == scan.tokens &&
         static_cast<uint64_t>(r.data.bytes) == scan.bytes &&
         r.data.files == static_cast<int64_t>(scan.files.size()) && r.config.max_length == scan.max_length;
}

bool same_data(const record::Record& r, const ScanResult& scan) {
  if (!same_counts(r, scan)) return false;
  return r.data.content_sha256.empty() || scan.content_sha256.empty() ||
         r.data.content_sha256 == scan.content_sha256;
}

// The terms a record was priced with.
cost::Pricing record_pricing(const record::InstanceInfo& i) {
  cost::Pricing p;
  p.spot_discount = i.spot_discount;
  p.platform_usd_per_hour = i.platform_usd_per_hour;
  p.machines = i.machines;
  return p;
}

}  // namespace

std::string terms_text(const cost::Pricing& p) {
  std::string s = p.spot_discount > 0 ? fmt::format("spot discount {:g}", p.spot_discount) : "on demand";
  if (p.platform_usd_per_hour > 0)
    s += fmt::format(", platform ${:g}/h per machine", p.platform_usd_per_hour);
  s += p.machines == 1 ? std::string(", one machine") : fmt::format(", {} machines", p.machines);
  return s;
}

bool needs_content_hash(const ScanResult& scan, const std::vector<SourcedRecord>& records) {
  for (const SourcedRecord& sr : records) {
    if (!sr.record.data.content_sha256.empty() && same_counts(sr.record, scan)) return true;
  }
  return false;
}

Status check_price_list(const std::vector<cost::PriceList>& lists, const std::string& name) {
  if (name.empty()) return Status();
  std::string names;
  for (const cost::PriceList& list : lists) {
    if (list.name == name) return Status();
    names += (names.empty() ? "" : ", ") + list.name;
  }
  return invalid_argument(fmt::format("--price-list: no price list named '{}' (known: {})", name, names));
}

namespace {

// The plan's inputs and the work of the scanned rows under each policy.
PlanResult plan_of_inputs(ScanResult scan, int64_t records_read, const PlanOptions& options) {
  PlanResult plan;
  plan.model = options.model;
  plan.model_name = options.model_name;
  plan.model_synthetic = options.model_synthetic;
  plan.embedding_dimensions = options.embedding_dimensions;
  plan.price_list = options.price_list;
  plan.records_read = records_read;
  plan.corpus_rows = options.corpus_rows > 0 ? options.corpus_rows : scan.rows;
  plan.scale = scan.rows > 0 ? static_cast<double>(plan.corpus_rows) / static_cast<double>(scan.rows) : 0.0;
  plan.vector_bytes = static_cast<double>(plan.corpus_rows) * plan.embedding_dimensions * sizeof(float);
  plan.seed_flops = flops_of_lengths(plan.model, scan.seed_padding.padded_rows_at_length);
  plan.tokens_flops = flops_of_lengths(plan.model, scan.length_counts);
  plan.tokens_padded_flops = flops_of_lengths(plan.model, scan.tokens_padding.padded_rows_at_length);
  plan.scan = std::move(scan);
  return plan;
}

// The records that can give a rate; the others are noted.
std::vector<Usable> usable_records(const std::vector<SourcedRecord>& records,
                                   std::vector<std::string>& notes) {
  std::vector<Usable> usable;
  usable.reserve(records.size());
  int64_t failed = 0;
  for (const SourcedRecord& sr : records) {
    if (!sr.record.ok()) {
      ++failed;
      continue;
    }
    Result<RecordRate> rate = record_rate(sr.record);
    if (!rate.ok()) {
      notes.push_back(fmt::format("{}: left out: {}", sr.origin, rate.status().message()));
      continue;
    }
    usable.push_back({&sr, *rate});
  }
  if (failed > 0) notes.push_back(fmt::format("{} failed benchmark point(s) left out", failed));
  return usable;
}

// Price targets: every instance of the lists shown, then instances records
// name that no list holds (priced as the record was), then unpriced
// machines; each with the records that ran on it.
std::vector<Target> price_targets(const std::vector<Usable>& usable, const PlanOptions& options,
                                  std::vector<std::string>& notes) {
  std::vector<Target> targets;
  std::set<std::string> listed;
  for (const cost::PriceList& list : options.price_lists) {
    if (!options.price_list.empty() && list.name != options.price_list) continue;
    for (const cost::Instance& instance : list.instances) {
      Target t;
      t.name = instance.name;
      t.list = &list;
      t.instance = &instance;
      listed.insert(instance.name);
      targets.push_back(std::move(t));
    }
  }
  std::map<std::string, size_t> extra;  // record-priced or unpriced targets by key
  int64_t other_list = 0;
  for (const Usable& u : usable) {
    const record::Record& r = u.source->record;
    if (r.instance) {
      if (listed.count(r.instance->name)) {
        for (Target& t : targets) {
          if (t.name == r.instance->name) t.candidates.push_back(&u);
        }
        continue;
      }
      if (!options.price_list.empty() && r.instance->price_list != options.price_list) {
        ++other_list;
        continue;
      }
      const bool priced = r.instance->usd_per_hour > 0;
      const std::string key = (priced ? "$" : "?") + r.instance->price_list + "/" + r.instance->name;
      auto [it, added] = extra.emplace(key, targets.size());
      if (added) {
        Target t;
        t.name = priced ? r.instance->name : r.instance->name + " (unpriced)";
        t.record_priced = priced;
        t.priced = priced;
        targets.push_back(std::move(t));
      }
      targets[it->second].candidates.push_back(&u);
      continue;
    }
    const std::string key = "machine/" + r.machine();
    auto [it, added] = extra.emplace(key, targets.size());
    if (added) {
      Target t;
      t.name = (r.machine().empty() ? std::string("this machine") : r.machine()) + " (unpriced)";
      t.priced = false;
      targets.push_back(std::move(t));
    }
    targets[it->second].candidates.push_back(&u);
  }
  if (other_list > 0) {
    notes.push_back(
        fmt::format("{} record(s) priced from lists other than {} and on instances it does not "
                    "hold: left out",
                    other_list, options.price_list));
  }
  return targets;
}

// The index of `u` in plan.records, adding it on first use.
size_t use_record(PlanResult& plan, std::map<const SourcedRecord*, size_t>& used, const Usable& u) {
  auto [it, added] = used.emplace(u.source, plan.records.size());
  if (!added) return it->second;
  const record::Record& r = u.source->record;
  RecordUse ru;
  ru.origin = u.source->origin;
  // Each prediction is priced for its own target, not at the record's price.
  ru.setup = record::setup_of(r, 0);
  ru.batch_size = r.config.batch_size;
  ru.sweep_id = r.sweep_id;
  ru.point = r.point;
  ru.points = r.points;
  ru.started_at = r.started_at;
  ru.shape = u.rate.shape;
  ru.rows = r.classified_rows();
  ru.tokens = r.classified_tokens();
  ru.computed_tokens = r.computed_tokens;
  ru.rate = u.rate;
  ru.skips_padding = record_skips_padding(r, &ru.skips_padding_why);
  plan.records.push_back(std::move(ru));
  return it->second;
}

// The record a target's prediction at `precision` under `policy` rests on:
// the same model shape if any, then the same batching policy, then these
// inputs, then the fastest rate.
const Usable& best_record(const Target& t, const std::string& precision, const std::string& policy,
                          const PlanResult& plan) {
  std::vector<const Usable*> pool;
  for (const Usable* u : t.candidates) {
    if (u->source->record.config.precision == precision) pool.push_back(u);
  }
  auto keep_if_any = [&pool](auto pred) {
    std::vector<const Usable*> kept;
    for (const Usable* u : pool) {
      if (pred(*u)) kept.push_back(u);
    }
    if (!kept.empty()) pool = std::move(kept);
  };
  keep_if_any([&](const Usable& u) { return u.rate.shape == plan.model; });
  keep_if_any([&](const Usable& u) { return u.source->record.config.batching == policy; });
  // A record that ran these very inputs beats a faster one on other data.
  keep_if_any([&](const Usable& u) { return same_data(u.source->record, plan.scan); });
  return **std::max_element(pool.begin(), pool.end(), [](const Usable* a, const Usable* b) {
    return a->rate.flops_per_second < b->rate.flops_per_second;
  });
}

// The work and time of the corpus under `p.batching` at `best`'s rate:
// measured where the record ran these very inputs the same way, else
// projected.
void predict_time(Prediction& p, const Usable& best, const RecordUse& ru, const PlanResult& plan) {
  const record::Record& r = best.source->record;
  const ScanResult& s = plan.scan;
  p.model_differs = best.rate.shape != plan.model;
  p.batching_differs = r.config.batching != p.batching;
  double flops = 0;
  if (p.batching == "seed") {
    flops = plan.seed_flops;
    p.flops_how = "every row padded to its file's longest row, the padding computed";
  } else if (ru.skips_padding) {
    flops = plan.tokens_flops;
    p.flops_how = "real lengths (" + ru.skips_padding_why + ")";
  } else {
    flops = plan.tokens_padded_flops;
    p.flops_how = "rows padded to their batch's longest row (" + ru.skips_padding_why + ")";
  }
  p.flops = flops * plan.scale;
  p.measured = !p.model_differs && !p.batching_differs && same_data(r, s) && plan.corpus_rows == s.rows;
  if (p.measured) {
    p.seconds = r.wall_seconds.median;
    p.how = fmt::format("measured: the record's median wall time over {} repetition(s) of these inputs",
                        r.repetitions.empty() ? 1 : r.repetitions.size());
  } else {
    p.seconds = best.rate.flops_per_second > 0 ? p.flops / best.rate.flops_per_second : 0;
    p.how = fmt::format("projected: {:.4g} FLOPs / {:.4g} FLOP/s", p.flops, best.rate.flops_per_second);
    if (p.model_differs) p.how += "; the record's model differs (" + best.rate.shape.describe() + ")";
    if (p.batching_differs) p.how += "; rate measured with " + r.config.batching + " batching";
  }
}

// A target no loaded list holds: the record's own price and terms.
void price_as_recorded(Prediction& p, const record::InstanceInfo& i) {
  p.instance = i.name;
  p.price_list = i.price_list;
  p.on_demand_usd_per_hour = i.on_demand_usd_per_hour;
  if (cost::validate(record_pricing(i)).ok() && i.on_demand_usd_per_hour > 0) {
    p.record_terms = true;
    p.terms = record_pricing(i);
    cost::Instance priced_as;
    priced_as.usd_per_hour = i.on_demand_usd_per_hour;
    p.usd_per_hour = cost::hourly_usd(priced_as, p.terms);
    p.price_how = fmt::format(
        "the record's price (list {} not loaded): on-demand ${:.4f}/h per machine; terms: {} (the "
        "record's)",
        i.price_list, i.on_demand_usd_per_hour, terms_text(p.terms));
  } else {
    // A record without usable terms: its hourly price as written, taken as one machine on demand.
    p.on_demand_usd_per_hour = p.usd_per_hour = i.usd_per_hour;
    p.price_how = fmt::format("the record's price as written (list {} not loaded): ${:.4f}/h", i.price_list,
                              i.usd_per_hour);
  }
}

// A listed instance: the list's on-demand price; the record's terms hold for
// the instance and list it was priced for only, any other is on demand, one
// machine.
void price_from_list(Prediction& p, const Target& t, const record::Record& r) {
  p.instance = t.instance->name;
  p.price_list = t.list->name;
  p.on_demand_usd_per_hour = t.instance->usd_per_hour;
  const bool own = r.instance && r.instance->name == t.instance->name &&
                   r.instance->price_list == t.list->name && r.instance->usd_per_hour > 0 &&
                   cost::validate(record_pricing(*r.instance)).ok();
  if (own) {
    p.record_terms = true;
    p.terms = record_pricing(*r.instance);
  }
  p.usd_per_hour = cost::hourly_usd(*t.instance, p.terms);
  p.price_how = fmt::format("{}: on-demand ${:.4f}/h per machine; terms: {}", t.list->name,
                            t.instance->usd_per_hour, terms_text(p.terms));
  if (own) {
    p.price_how += " (the record's, as it was priced for this instance from this list)";
    if (r.instance->on_demand_usd_per_hour > 0 &&
        r.instance->on_demand_usd_per_hour != t.instance->usd_per_hour) {
      p.price_how +=
          fmt::format(" (its on-demand price then: ${:.4f}/h)", r.instance->on_demand_usd_per_hour);
    }
  } else if (r.instance && !cost::is_plain_on_demand(record_pricing(*r.instance))) {
    p.price_how +=
        fmt::format(" (the record's terms, {}, apply to {} from {} only)",
                    terms_text(record_pricing(*r.instance)), r.instance->name, r.instance->price_list);
  }
}

void price_prediction(Prediction& p, const Target& t, const record::Record& r) {
  if (!t.priced) return;
  p.priced = true;
  if (t.record_priced) {
    price_as_recorded(p, *r.instance);
  } else {
    price_from_list(p, t, r);
  }
  const cost::CostEstimate c = cost::estimate_cost(p.usd_per_hour, p.seconds, p.rows, 0);
  p.usd = c.cost_to_solution_usd;
  p.usd_per_million_rows = c.usd_per_million_rows;
}

// One prediction per target, precision measured on it and batching policy;
// priced ones by cost, then unpriced ones by time.
void predict(PlanResult& plan, const std::vector<Target>& targets) {
  std::map<const SourcedRecord*, size_t> used;
  for (const Target& t : targets) {
    if (t.candidates.empty() || plan.scan.rows == 0) continue;
    std::set<std::string> precisions;
    for (const Usable* u : t.candidates) precisions.insert(u->source->record.config.precision);
    for (const std::string& precision : precisions) {
      for (const char* policy : {"seed", "tokens"}) {
        const Usable& best = best_record(t, precision, policy, plan);
        Prediction p;
        p.record = use_record(plan, used, best);
        p.target = t.name;
        p.batching = policy;
        p.precision = precision;
        p.rows = plan.corpus_rows;
        predict_time(p, best, plan.records[p.record], plan);
        price_prediction(p, t, best.source->record);
        plan.predictions.push_back(std::move(p));
      }
    }
  }
  std::stable_sort(plan.predictions.begin(), plan.predictions.end(),
                   [](const Prediction& a, const Prediction& b) {
                     if (a.priced != b.priced) return a.priced;
                     if (a.priced && a.usd != b.usd) return a.usd < b.usd;
                     return a.seconds < b.seconds;
                   });
  // The cheapest priced prediction is what an unmeasured instance must beat.
  for (size_t i = 0; i < plan.predictions.size(); ++i) {
    const Prediction& p = plan.predictions[i];
    if (p.priced && p.usd > 0 && (!plan.has_cheapest || p.usd < plan.predictions[plan.cheapest].usd)) {
      plan.has_cheapest = true;
      plan.cheapest = i;
    }
  }
}

// The bench command: these inputs and model, one instance (NAME when "").
std::string bench_command(const PlanOptions& options, const std::string& instance, bool gpu) {
  std::string cmd = "infercost bench";
  // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) of " " + std::string here.
  for (const std::string& input : options.inputs) (cmd += ' ') += shell_word(input);
  (cmd += " --model ") += shell_word(options.model_dir.empty() ? "MODEL_DIR" : options.model_dir);
  cmd += " --batching seed,tokens";
  if (options.embedding_dimensions > 0) cmd += " --embed";
  if (options.pooling) cmd += " --pooling " + shell_word(model::pooling_name(*options.pooling));
  if (gpu) cmd += " --device cuda";
  cmd += " --instance " + (instance.empty() ? std::string("NAME") : shell_word(instance));
  cmd += " --out " + (instance.empty() ? std::string("NAME.jsonl") : shell_word(instance + ".jsonl"));
  return cmd;
}

// The listed instances no record ran on: what they must cost or achieve to
// beat the cheapest prediction, and the command that would measure them.
void list_unmeasured(PlanResult& plan, const std::vector<Target>& targets, const PlanOptions& options) {
  const Prediction* cheapest = plan.has_cheapest ? &plan.predictions[plan.cheapest] : nullptr;
  for (const Target& t : targets) {
    if (!t.instance || !t.candidates.empty()) continue;
    Unmeasured u;
    u.instance = t.name;
    u.price_list = t.list->name;
    u.usd_per_hour = t.instance->usd_per_hour;
    u.gpus = t.instance->gpus;
    u.gpu = t.instance->gpu;
    u.vcpus = t.instance->vcpus;
    u.memory = t.instance->memory;
    if (cheapest && u.usd_per_hour > 0 && plan.corpus_rows > 0) {
      // Both sides at the same terms: the cheapest prediction's.
      u.break_even_usd_per_hour = cost::hourly_usd(*t.instance, cheapest->terms);
      u.has_break_even = u.break_even_usd_per_hour > 0;
      if (u.has_break_even) {
        u.deadline_seconds = cheapest->usd / u.break_even_usd_per_hour * 3600.0;
        u.break_even_rows_per_second = static_cast<double>(plan.corpus_rows) / u.deadline_seconds;
      }
    }
    u.bench_command = bench_command(options, u.instance, u.gpus > 0);
    if (u.gpus > 0 && !options.cuda_backend) u.bench_note = kNoCudaNote;
    plan.unmeasured.push_back(std::move(u));
  }
}

// What the reader should know about the predictions as a whole.
void add_closing_notes(PlanResult& plan, bool any_records) {
  const ScanResult& s = plan.scan;
  if (!any_records) {
    plan.notes.push_back(
        "no --records given: nothing is predicted. Benchmark an instance with `infercost bench` (see \"Not "
        "measured\" above) and pass its results with --records.");
  } else if (plan.predictions.empty()) {
    plan.notes.push_back("none of the records could be used for a prediction");
  }
  if (s.rows > 0 && plan.corpus_rows != s.rows) {
    plan.notes.push_back(fmt::format(
        "times and costs are for --corpus-rows {} rows: the scanned rows' work scaled by {:.6g} (the scanned "
        "mean per row)",
        plan.corpus_rows, plan.scale));
  }
  if (!plan.predictions.empty()) {
    plan.notes.push_back(
        "times start after the model is loaded (as the records' wall times do); start-up, data transfer and "
        "the model load are not included");
  }
  if (plan.embedding_dimensions > 0) {
    plan.notes.push_back(
        "an embedding job computes the encoder as a classification run does (the head is not in the work "
        "formula, and pooling is a pass over the last layer's vectors): records of `infercost run` or "
        "`infercost bench --embed` on an encoder of the same shape predict it");
  }
}

}  // namespace

Result<PlanResult> make_plan(ScanResult scan, const std::vector<SourcedRecord>& records,
                             const PlanOptions& options) {
  INFERCOST_RETURN_IF_ERROR(check_price_list(options.price_lists, options.price_list));
  if (options.corpus_rows < 0) return invalid_argument("--corpus-rows must not be negative");
  if (!options.model.known()) return invalid_argument("the model's shape (layers, hidden, FFN) is unknown");
  PlanResult plan = plan_of_inputs(std::move(scan), static_cast<int64_t>(records.size()), options);
  const std::vector<Usable> usable = usable_records(records, plan.notes);
  const std::vector<Target> targets = price_targets(usable, options, plan.notes);
  if (plan.scan.rows == 0) plan.notes.push_back("the inputs hold no rows to classify: nothing to predict");
  predict(plan, targets);
  plan.bench_template = bench_command(options, "", false);
  list_unmeasured(plan, targets, options);
  add_closing_notes(plan, !records.empty());
  return plan;
}

}  // namespace infercost::plan
