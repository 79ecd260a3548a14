// Small SVG chart writers: an x/y chart (lines, markers, error bars, linear
// or log axes), horizontal bars and grouped vertical bars. Output is plain
// SVG 1.1 text with a viewBox (it scales to its container), inline styles
// only, a fixed palette, a generic font family and escaped text: no script,
// no external reference. Layout is computed from estimated text widths, so
// the same input always gives the same bytes.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace infercost::report::svg {

// Colours for series, in order (colour-blind friendly, Okabe-Ito based).
inline constexpr const char* kPalette[] = {"#0072b2", "#e69f00", "#009e73", "#cc79a7", "#56b4e9",
                                           "#d55e00", "#7f7f7f", "#b8a000", "#6a3d9a", "#1b9e9e"};
inline constexpr int kPaletteSize = 10;
const char* color(int index);  // kPalette[index % kPaletteSize]

struct Axis {
  std::string title;  // with its unit: "wall time (s)"
  bool log = false;
  bool from_zero = false;  // linear axes: include 0
  // Linear axes: fixed ends instead of nice ones (e.g. 0..100 for percents).
  std::optional<double> min, max;
  // Log axes: put ticks at the data's distinct values (batch sizes) when
  // there are at most 12 of them, instead of at 1-2-5 steps.
  bool ticks_at_data = false;
};

struct XYPoint {
  double x = 0;
  double y = 0;
  // Error bar from y_low to y_high when has_error.
  bool has_error = false;
  double y_low = 0;
  double y_high = 0;
  bool emphasis = false;  // drawn larger with a dark ring
  std::string mark;       // short text drawn beside the point ("1")
  std::string tooltip;    // <title> of the marker
};

struct Series {
  std::string name;
  std::vector<XYPoint> points;  // drawn in this order
  int color = 0;                // palette index
  bool line = true;             // join the points
  bool dashed = false;
  bool in_legend = true;
};

struct XYChart {
  std::string title;
  Axis x, y;
  std::vector<Series> series;
  // A dark path drawn over the series through these (x, y), e.g. a Pareto
  // front, with its legend entry.
  std::vector<std::pair<double, double>> overlay;
  std::string overlay_name;
  std::string empty_text = "no data";  // shown when there is nothing to draw
};

struct Bar {
  std::string label;
  double value = 0;
  bool has_error = false;
  double low = 0, high = 0;
  int color = 0;
  std::string value_text;  // printed at the end of the bar
  std::string tooltip;
};

// Horizontal bars, one per row, top to bottom in the given order.
struct BarChart {
  std::string title;
  std::string value_title;  // axis title with unit
  std::vector<Bar> bars;
  std::vector<std::pair<std::string, int>> legend;  // name, palette index
  std::string empty_text = "no data";
};

// Vertical bars in groups; every bar's colour is its key's.
struct GroupedBarChart {
  std::string title;
  std::string value_title;
  std::vector<std::string> groups;
  std::vector<std::string> keys;  // legend, palette index = position
  // values[g][k]: the bar of key k in group g, or none.
  std::vector<std::vector<std::optional<Bar>>> values;
  std::string empty_text = "no data";
};

// standalone: a file of its own (XML declaration and xmlns); otherwise for
// inlining in HTML.
std::string render(const XYChart& chart, bool standalone);
std::string render(const BarChart& chart, bool standalone);
std::string render(const GroupedBarChart& chart, bool standalone);

// Tick positions for an axis over [lo, hi] (data values; for log axes both
// must be positive): nice 1-2-5 steps, decades on log axes, or the data's
// values for Axis::ticks_at_data. `data` is used only for ticks_at_data.
struct Ticks {
  double lo = 0, hi = 0;  // the axis ends (extended to the ticks on linear axes)
  std::vector<double> values;
  int decimals = 0;                 // of the labels of a linear axis
  std::vector<std::string> labels;  // one per value ("0.5", "1", "20k")
};
Ticks ticks_for(const Axis& axis, double lo, double hi, const std::vector<double>& data);

}  // namespace infercost::report::svg
