#include "plan/work.h"

#include <gtest/gtest.h>

namespace infercost::plan {
namespace {

// layers 2, hidden 4, FFN 8.
const ModelShape kSmall{2, 4, 8};

TEST(Work, RowFlopsByHand) {
  // 2 x (2 x 3 x (4 x 16 + 2 x 4 x 8) + 4 x 9 x 4) = 2 x (768 + 144) = 1824.
  EXPECT_DOUBLE_EQ(row_flops(kSmall, 3), 1824.0);
  EXPECT_DOUBLE_EQ(linear_flops_per_token(kSmall), 512.0);
  EXPECT_DOUBLE_EQ(attention_flops(kSmall, 3), 32.0 * 9);
  // DistilBERT-base, one 128-token row: 6 x (2 x 128 x (4 x 768^2 + 2 x 768 x 3072) + 4 x 128^2 x 768).
  const ModelShape base{6, 768, 3072};
  EXPECT_DOUBLE_EQ(row_flops(base, 128),
                   6.0 * (2.0 * 128 * (4.0 * 768 * 768 + 2.0 * 768 * 3072) + 4.0 * 128 * 128 * 768));
  EXPECT_NEAR(row_flops(base, 128), 1.1175e10, 1e7);
}

TEST(Work, FlopsOfLengthsSumsRows) {
  std::vector<int64_t> at(5, 0);
  at[3] = 2;
  at[4] = 1;
  // 2 x 1824 + 2 x (2 x 4 x 128 + 4 x 16 x 4) = 3648 + 2560.
  EXPECT_DOUBLE_EQ(flops_of_lengths(kSmall, at), 3648.0 + 2560.0);
  EXPECT_DOUBLE_EQ(flops_of_lengths(kSmall, {}), 0.0);
}

record::Record small_record() {
  record::Record r;
  r.model.layers = 2;
  r.model.hidden = 4;
  r.model.intermediate = 8;
  r.config.device = "cpu";
  r.config.batching = "tokens";
  r.config.max_length = 32;
  r.rows = 3;
  r.tokens = 30;
  r.padded_tokens = 33;
  r.computed_tokens = 30;
  r.data.rows = 3;
  r.data.tokens = 30;
  r.data.length_edges = {1, 9, 17};
  r.data.length_counts = {1, 1, 1};
  r.wall_seconds = {2.0, 1.5, 2.5};
  return r;
}

TEST(Work, RecordRateFromHistogramMidpoints) {
  Result<RecordRate> rate = record_rate(small_record());
  ASSERT_TRUE(rate.ok()) << rate.status().to_string();
  // Linear: 512 x 30 computed tokens = 15360. Attention: midpoints 4.5 ([1,8]),
  // 12.5 ([9,16]), 24.5 ([17,32]: the open bucket ends at max_length 32):
  // 32 x (20.25 + 156.25 + 600.25) = 24856.
  EXPECT_DOUBLE_EQ(rate->flops, 15360.0 + 24856.0);
  EXPECT_DOUBLE_EQ(rate->seconds, 2.0);
  EXPECT_DOUBLE_EQ(rate->flops_per_second, (15360.0 + 24856.0) / 2.0);
  EXPECT_NE(rate->method.find("midpoints"), std::string::npos) << rate->method;
}

TEST(Work, RecordRateFromMeanComputedLengthWhenPaddingWasComputed) {
  record::Record r = small_record();
  r.config.batching = "seed";
  r.padded_tokens = 60;
  r.computed_tokens = 60;  // 3 rows padded to 20
  Result<RecordRate> rate = record_rate(r);
  ASSERT_TRUE(rate.ok()) << rate.status().to_string();
  // 512 x 60 + 32 x 3 x 20^2.
  EXPECT_DOUBLE_EQ(rate->flops, 30720.0 + 38400.0);
  EXPECT_NE(rate->method.find("mean computed length 20.0"), std::string::npos) << rate->method;
  // A histogram that does not account for every row is not used either.
  r = small_record();
  r.data.length_counts = {1, 1, 0};
  rate = record_rate(r);
  ASSERT_TRUE(rate.ok());
  EXPECT_DOUBLE_EQ(rate->flops, 15360.0 + 32.0 * 3 * 100.0);
}

// A record without the run's own counts (rows, tokens 0) is read from its data's, through
// Record::classified_rows() and classified_tokens(); the run's counts win when both are there.
TEST(Work, RecordRateFallsBackToTheDatasCounts) {
  record::Record r = small_record();
  r.rows = 0;
  r.tokens = 0;
  r.computed_tokens = 0;
  EXPECT_EQ(r.classified_rows(), 3);
  EXPECT_EQ(r.classified_tokens(), 30);
  Result<RecordRate> rate = record_rate(r);
  ASSERT_TRUE(rate.ok()) << rate.status().to_string();
  // As from the run's counts: 512 x 30 real tokens + the histogram's 24856.
  EXPECT_DOUBLE_EQ(rate->flops, 15360.0 + 24856.0);
  EXPECT_NE(rate->method.find("30 real tokens"), std::string::npos) << rate->method;
  r = small_record();
  r.data.rows = 7;
  r.data.tokens = 70;
  EXPECT_EQ(r.classified_rows(), 3);
  EXPECT_EQ(r.classified_tokens(), 30);
}

TEST(Work, RecordsThatCannotGiveARate) {
  record::Record r = small_record();
  r.status = "failed";
  r.error = "out of memory";
  EXPECT_NE(record_rate(r).status().message().find("out of memory"), std::string::npos);
  r = small_record();
  r.model.hidden = 0;
  EXPECT_NE(record_rate(r).status().message().find("model shape"), std::string::npos);
  r = small_record();
  r.wall_seconds = {};
  EXPECT_NE(record_rate(r).status().message().find("wall time"), std::string::npos);
  r = small_record();
  r.rows = 0;
  r.data.rows = 0;
  EXPECT_NE(record_rate(r).status().message().find("no rows"), std::string::npos);
}

TEST(Work, WhetherARecordsDeviceSkipsPadding) {
  record::Record r = small_record();
  std::string why;
  EXPECT_TRUE(record_skips_padding(r, &why));
  EXPECT_NE(why.find("real tokens only"), std::string::npos) << why;
  r.config.device = "cuda:0";
  r.computed_tokens = 33;  // its tokens run computed the padding
  EXPECT_FALSE(record_skips_padding(r, &why));
  EXPECT_NE(why.find("computed the padding"), std::string::npos) << why;
  r.config.batching = "seed";  // nothing to tell from: by device
  EXPECT_FALSE(record_skips_padding(r, &why));
  EXPECT_NE(why.find("cuda:0"), std::string::npos) << why;
  r.config.device = "cpu";
  EXPECT_TRUE(record_skips_padding(r, &why));
}

}  // namespace
}  // namespace infercost::plan
