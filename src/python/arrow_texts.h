// Texts read without a copy: a column of string views and null flags over
// buffers someone else owns (Arrow arrays, Python str objects), and the
// reader of Arrow string arrays through the Arrow C data interface.
//
// The C data interface structs are written here from the specification
// (https://arrow.apache.org/docs/format/CDataInterface.html): no libarrow is
// linked. Supported formats: "u" (utf8, int32 offsets), "U" (large_utf8,
// int64 offsets), "vu" (utf8_view) and "n" (null: every row null); sliced
// arrays (ArrowArray::offset) and validity bitmaps. Other formats are
// kUnsupported naming the format.
//
// This is the seam the package's Model.classify takes its texts through: a
// TextColumn is what an Encoder's classify(texts, nulls) reads.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "infercost/status.h"

extern "C" {
// The Arrow C data interface (ABI-stable; field order and types are the
// specification's).
#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE
#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  const char* format;
  const char* name;
  const char* metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema** children;
  struct ArrowSchema* dictionary;
  void (*release)(struct ArrowSchema*);
  void* private_data;
};

struct ArrowArray {
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void** buffers;
  struct ArrowArray** children;
  struct ArrowArray* dictionary;
  void (*release)(struct ArrowArray*);
  void* private_data;
};
#endif  // ARROW_C_DATA_INTERFACE

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE
struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream*, struct ArrowSchema* out);
  int (*get_next)(struct ArrowArrayStream*, struct ArrowArray* out);
  const char* (*get_last_error)(struct ArrowArrayStream*);
  void (*release)(struct ArrowArrayStream*);
  void* private_data;
};
#endif  // ARROW_C_STREAM_INTERFACE
}

namespace infercost::python {

// Texts as views into buffers the column keeps alive (`owners`). A null row
// has an empty view and is_null 1. Move-only in effect: the views stay valid
// as long as the column (or whoever took its owners) lives.
struct TextColumn {
  std::vector<std::string_view> texts;
  std::vector<uint8_t> is_null;
  // What keeps the buffers alive: released Arrow arrays, Python references.
  std::vector<std::shared_ptr<void>> owners;
  int64_t chunks = 0;  // Arrow arrays read (a stream may hold several)

  size_t size() const { return texts.size(); }
};

// Takes ownership of `array` (moves it out: array->release becomes null) and
// appends its rows to `out`, the views pointing into its buffers. `schema` is
// only read. On error `array` is still released (by `out`'s owners or here).
// kUnsupported for a non-string format (naming it), kCorruption for offsets
// that go backwards or a buffer that is missing.
Status append_arrow_array(const ArrowSchema& schema, ArrowArray* array, TextColumn& out);

// Reads every array of `stream` (which it takes over, as above) into `out`.
// Errors: as append_arrow_array, or kInternal with the producer's
// get_last_error() when get_schema/get_next fail.
Status append_arrow_stream(ArrowArrayStream* stream, TextColumn& out);

// Takes over a schema: a shared owner that releases it.
std::shared_ptr<ArrowSchema> own_schema(ArrowSchema* schema);

}  // namespace infercost::python
