#include "report/svg.h"

#include <gtest/gtest.h>

#include <cmath>

#include "check_helpers.h"

namespace infercost::report::svg {
namespace {

using testing::xml_problem;

TEST(Ticks, LinearFromZeroUsesNiceSteps) {
  Axis a;
  a.from_zero = true;
  Ticks t = ticks_for(a, 3, 97, {});
  EXPECT_EQ(t.lo, 0);
  EXPECT_EQ(t.hi, 100);
  EXPECT_EQ(t.values, (std::vector<double>{0, 20, 40, 60, 80, 100}));
  EXPECT_EQ(t.decimals, 0);
  Ticks small = ticks_for(a, 0, 0.042, {});
  EXPECT_EQ(small.decimals, 2);
  EXPECT_NEAR(small.hi, 0.05, 1e-12);
}

TEST(Ticks, FixedEnds) {
  Axis a;
  a.min = 0;
  a.max = 100;
  Ticks t = ticks_for(a, 14, 57, {});
  EXPECT_EQ(t.lo, 0);
  EXPECT_EQ(t.hi, 100);
  EXPECT_EQ(t.values.front(), 0);
  EXPECT_EQ(t.values.back(), 100);
}

TEST(Ticks, LogAxisAtTheDataOrAtDecades) {
  Axis a;
  a.log = true;
  a.ticks_at_data = true;
  Ticks t = ticks_for(a, 32, 4800, {160, 32, 4800, 280, 160});
  EXPECT_EQ(t.values, (std::vector<double>{32, 160, 280, 4800}));
  EXPECT_LT(t.lo, 32);
  EXPECT_GT(t.hi, 4800);
  a.ticks_at_data = false;
  Ticks d = ticks_for(a, 0.5, 5000, {});
  EXPECT_EQ(d.values, (std::vector<double>{1, 10, 100, 1000}));
  Ticks narrow = ticks_for(a, 12, 90, {});
  EXPECT_EQ(narrow.values, (std::vector<double>{20, 50, 100}));
  Ticks tiny = ticks_for(a, 0.012, 0.09, {});
  EXPECT_EQ(tiny.decimals, 2);
}

XYChart sample_xy() {
  XYChart c;
  c.title = "Runtime <vs> batch & \"size\"";
  c.x.title = "batch size (rows)";
  c.x.log = true;
  c.x.ticks_at_data = true;
  c.y.title = "wall time (s)";
  c.y.from_zero = true;
  Series s{"p3.8xlarge 'fp32' <seed>", {}, 0};
  for (int b : {32, 64, 128}) {
    XYPoint p;
    p.x = b;
    p.y = 100.0 / b;
    p.has_error = true;
    p.y_low = p.y * 0.9;
    p.y_high = p.y * 1.1;
    p.mark = b == 64 ? "1" : "";
    p.emphasis = b == 64;
    s.points.push_back(p);
  }
  c.series.push_back(s);
  c.overlay = {{32, 100.0 / 32}, {128, 100.0 / 128}};
  c.overlay_name = "Pareto front";
  return c;
}

TEST(Svg, XYChartIsWellFormedScalableAndEscaped) {
  const std::string file = render(sample_xy(), true);
  EXPECT_EQ(xml_problem(file), "") << file;
  EXPECT_EQ(file.rfind("<?xml", 0), 0u);
  EXPECT_NE(file.find("xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_NE(file.find("viewBox=\"0 0 760 "), std::string::npos);
  EXPECT_NE(file.find("Runtime &lt;vs&gt; batch &amp; &quot;size&quot;"), std::string::npos);
  EXPECT_NE(file.find("p3.8xlarge &#39;fp32&#39; &lt;seed&gt;"), std::string::npos);
  EXPECT_NE(file.find("wall time (s)"), std::string::npos);
  EXPECT_NE(file.find("batch size (rows), log scale"), std::string::npos);
  EXPECT_NE(file.find(">128</text>"), std::string::npos);  // a tick at the data
  EXPECT_NE(file.find("<polyline"), std::string::npos);
  EXPECT_NE(file.find(kPalette[0]), std::string::npos);
  EXPECT_NE(file.find("Pareto front"), std::string::npos);
  EXPECT_EQ(file.find("<script"), std::string::npos);
  const std::string inline_svg = render(sample_xy(), false);
  EXPECT_EQ(xml_problem(inline_svg), "");
  EXPECT_EQ(inline_svg.find("xmlns"), std::string::npos);
  EXPECT_EQ(inline_svg.find("http"), std::string::npos);
  // Deterministic.
  EXPECT_EQ(render(sample_xy(), true), file);
}

TEST(Svg, LogAxisWithZeroFallsBackToLinear) {
  XYChart c = sample_xy();
  c.series[0].points[0].x = 0;  // e.g. a record without a batch size
  const std::string s = render(c, true);
  EXPECT_EQ(xml_problem(s), "");
  EXPECT_EQ(s.find("batch size (rows), log scale"), std::string::npos);
  EXPECT_NE(s.find("batch size (rows)"), std::string::npos);
  EXPECT_EQ(s.find("nan"), std::string::npos);
  EXPECT_EQ(s.find("inf"), std::string::npos);
}

TEST(Svg, EmptyChartsSaySo) {
  XYChart xy;
  xy.title = "nothing";
  const std::string a = render(xy, true);
  EXPECT_EQ(xml_problem(a), "");
  EXPECT_NE(a.find("no data"), std::string::npos);
  BarChart bars;
  bars.title = "no bars";
  bars.empty_text = "no priced point";
  const std::string b = render(bars, true);
  EXPECT_EQ(xml_problem(b), "");
  EXPECT_NE(b.find("no priced point"), std::string::npos);
  GroupedBarChart g;
  g.title = "no groups";
  EXPECT_EQ(xml_problem(render(g, true)), "");
}

TEST(Svg, BarsAndGroupedBars) {
  BarChart c;
  c.title = "Cost per million rows";
  c.value_title = "USD per million rows";
  c.legend = {{"c5.12xlarge", 0}, {"p3.8xlarge", 1}};
  c.bars = {{"c5.12xlarge int8", 0.13, true, 0.12, 0.14, 0, "$0.13", ""},
            {"a label that is far too long to fit in the space the chart gives to labels, so it is cut", 0.5,
             false, 0, 0, 1, "$0.50", ""}};
  const std::string s = render(c, true);
  EXPECT_EQ(xml_problem(s), "") << s;
  EXPECT_NE(s.find("$0.13"), std::string::npos);
  EXPECT_NE(s.find("\u2026"), std::string::npos);                // the long label is shortened
  EXPECT_NE(s.find("so it is cut</title>"), std::string::npos);  // in full in the tooltip

  GroupedBarChart g;
  g.title = "Throughput";
  g.value_title = "rows/s";
  g.groups = {"p3.8xlarge cuda:all", "c5.12xlarge cpu"};
  g.keys = {"fp32 seed", "fp16 tokens", "int8 tokens"};
  Bar b;
  b.value = 700;
  b.has_error = true;
  b.low = 690;
  b.high = 720;
  g.values = {{b, b, std::nullopt}, {b, std::nullopt, b}};
  const std::string gs = render(g, true);
  EXPECT_EQ(xml_problem(gs), "") << gs;
  EXPECT_NE(gs.find("int8 tokens"), std::string::npos);
  EXPECT_NE(gs.find(kPalette[2]), std::string::npos);
}

TEST(XmlCheck, CatchesMalformedXml) {
  EXPECT_EQ(xml_problem("<a><b x=\"1\"/>t &amp; u</a>"), "");
  EXPECT_NE(xml_problem("<a><b></a>"), "");
  EXPECT_NE(xml_problem("<a x=1></a>"), "");
  EXPECT_NE(xml_problem("<a>&nbsp;</a>"), "");
  EXPECT_NE(xml_problem("<a>x < y</a>"), "");
  EXPECT_NE(xml_problem("<a></a><b></b>"), "");
  EXPECT_NE(xml_problem("<a x=\"1\" x=\"2\"></a>"), "");
  EXPECT_NE(xml_problem("<a>"), "");
}

}  // namespace
}  // namespace infercost::report::svg
