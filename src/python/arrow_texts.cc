#include "python/arrow_texts.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

namespace infercost::python {

namespace {

// A moved-out ArrowArray on the heap, released with its owner.
std::shared_ptr<void> own_array(ArrowArray* array) {
  auto owned = std::shared_ptr<ArrowArray>(new ArrowArray(*array), [](ArrowArray* a) {
    if (a->release != nullptr) a->release(a);
    delete a;
  });
  array->release = nullptr;  // moved: the producer's struct is now empty
  return owned;
}

// Room for `size` elements, growing geometrically: a stream of many small
// chunks must not reallocate the whole column for each (an exact reserve per
// chunk made 50,000 chunks of 20 rows take 30 s).
template <typename T>
void reserve_for(std::vector<T>& v, size_t size) {
  if (size > v.capacity()) v.reserve(std::max(size, 2 * v.capacity()));
}

bool bit_set(const uint8_t* bitmap, int64_t i) {
  return (bitmap[i >> 3] >> (i & 7)) & 1;
}

// Whether row i (0-based within the array, before its offset) is null.
bool row_is_null(const ArrowArray& array, const uint8_t* validity, int64_t i) {
  return validity != nullptr && !bit_set(validity, array.offset + i);
}

// "u" and "U": offsets[offset + i] .. offsets[offset + i + 1] into the data buffer.
template <typename Offset>
Status append_offset_strings(const ArrowArray& array, TextColumn& out) {
  if (array.n_buffers != 3) {
    return corruption(fmt::format("a string array has {} buffers, not 3", array.n_buffers));
  }
  const auto* validity = static_cast<const uint8_t*>(array.buffers[0]);
  const auto* offsets = static_cast<const Offset*>(array.buffers[1]);
  const auto* data = static_cast<const char*>(array.buffers[2]);
  if (array.length > 0 && offsets == nullptr) return corruption("a string array has no offsets buffer");
  if (array.null_count == 0) validity = nullptr;  // the bitmap may be absent or stale then
  for (int64_t i = 0; i < array.length; ++i) {
    const Offset begin = offsets[array.offset + i];
    const Offset end = offsets[array.offset + i + 1];
    if (begin < 0 || end < begin) {
      return corruption(fmt::format("row {}: string offsets {} .. {} go backwards", i, begin, end));
    }
    const bool null = row_is_null(array, validity, i);
    if (!null && end > begin && data == nullptr) return corruption("a string array has no data buffer");
    out.texts.push_back(null ? std::string_view()
                             : std::string_view(data + begin, static_cast<size_t>(end - begin)));
    out.is_null.push_back(null ? 1 : 0);
  }
  return Status();
}

// "vu": 16-byte views; a string of at most 12 bytes lies inside its view
// (after the 4-byte length), a longer one in data buffer `index` at `offset`
// (after the length, a 4-byte prefix, the index and the offset). Buffers:
// validity, views, the data buffers, then their sizes (int64).
Status append_view_strings(const ArrowArray& array, TextColumn& out) {
  if (array.n_buffers < 3) {
    return corruption(fmt::format("a string view array has {} buffers, not at least 3", array.n_buffers));
  }
  const auto* validity = static_cast<const uint8_t*>(array.buffers[0]);
  const auto* views = static_cast<const char*>(array.buffers[1]);
  const int64_t data_buffers = array.n_buffers - 3;
  const auto* sizes = static_cast<const int64_t*>(array.buffers[array.n_buffers - 1]);
  if (array.length > 0 && views == nullptr) return corruption("a string view array has no views buffer");
  if (array.null_count == 0) validity = nullptr;
  constexpr int32_t kInline = 12;
  for (int64_t i = 0; i < array.length; ++i) {
    const char* view = views + 16 * (array.offset + i);
    const bool null = row_is_null(array, validity, i);
    if (null) {
      out.texts.emplace_back();
      out.is_null.push_back(1);
      continue;
    }
    int32_t length = 0;
    std::memcpy(&length, view, 4);
    if (length < 0) return corruption(fmt::format("row {}: string view of negative length {}", i, length));
    if (length <= kInline) {
      out.texts.emplace_back(view + 4, static_cast<size_t>(length));
    } else {
      int32_t index = 0;
      int32_t offset = 0;
      std::memcpy(&index, view + 8, 4);
      std::memcpy(&offset, view + 12, 4);
      if (index < 0 || index >= data_buffers || offset < 0 ||
          (sizes != nullptr && int64_t{offset} + length > sizes[index])) {
        return corruption(fmt::format("row {}: string view into buffer {} at {} (+{}) is out of range", i,
                                      index, offset, length));
      }
      const auto* data = static_cast<const char*>(array.buffers[2 + index]);
      out.texts.emplace_back(data + offset, static_cast<size_t>(length));
    }
    out.is_null.push_back(0);
  }
  return Status();
}

}  // namespace

std::shared_ptr<ArrowSchema> own_schema(ArrowSchema* schema) {
  auto owned = std::shared_ptr<ArrowSchema>(new ArrowSchema(*schema), [](ArrowSchema* s) {
    if (s->release != nullptr) s->release(s);
    delete s;
  });
  schema->release = nullptr;
  return owned;
}

Status append_arrow_array(const ArrowSchema& schema, ArrowArray* array, TextColumn& out) {
  if (array->release == nullptr) return invalid_argument("an Arrow array that was already released");
  // Owned from here on, whatever happens: the views point into it.
  std::shared_ptr<void> owner = own_array(array);
  const ArrowArray& a = *static_cast<const ArrowArray*>(owner.get());
  const std::string_view format = schema.format != nullptr ? schema.format : "";
  if (schema.dictionary != nullptr || a.dictionary != nullptr) {
    return unsupported(fmt::format(
        "a dictionary-encoded array (indices '{}'): expected strings (Arrow utf8, large_utf8 or utf8_view); "
        "decode it first (e.g. pyarrow's .dictionary_decode(), pandas' .astype(str))",
        format));
  }
  if (a.length < 0 || a.offset < 0) {
    return corruption(fmt::format("an Arrow array of length {} at offset {}", a.length, a.offset));
  }
  const size_t before = out.texts.size();
  reserve_for(out.texts, before + static_cast<size_t>(a.length));
  reserve_for(out.is_null, before + static_cast<size_t>(a.length));
  Status status;
  if (format == "u") {
    status = append_offset_strings<int32_t>(a, out);
  } else if (format == "U") {
    status = append_offset_strings<int64_t>(a, out);
  } else if (format == "vu") {
    status = append_view_strings(a, out);
  } else if (format == "n") {
    out.texts.resize(before + static_cast<size_t>(a.length));
    out.is_null.resize(before + static_cast<size_t>(a.length), 1);
  } else {
    const char* what = format == "+s" ? " (a struct: a table or record batch? pass one column)" : "";
    return unsupported(fmt::format(
        "an Arrow array of format '{}'{}: expected strings (Arrow utf8 'u', large_utf8 'U' or utf8_view "
        "'vu')",
        format, what));
  }
  if (!status.ok()) {
    out.texts.resize(before);
    out.is_null.resize(before);
    return status;
  }
  out.owners.push_back(std::move(owner));
  ++out.chunks;
  return Status();
}

Status append_arrow_stream(ArrowArrayStream* stream, TextColumn& out) {
  if (stream->release == nullptr) return invalid_argument("an Arrow stream that was already released");
  // Arrays from get_next outlive the stream (the specification's rule), so
  // the stream itself is released when this returns.
  auto owned = std::shared_ptr<ArrowArrayStream>(new ArrowArrayStream(*stream), [](ArrowArrayStream* s) {
    if (s->release != nullptr) s->release(s);
    delete s;
  });
  stream->release = nullptr;
  ArrowArrayStream* s = owned.get();
  auto producer_error = [s](const char* call, int code) {
    const char* message = s->get_last_error != nullptr ? s->get_last_error(s) : nullptr;
    return internal_error(fmt::format("Arrow stream: {} failed (errno {}){}{}", call, code,
                                      message ? ": " : "", message ? message : ""));
  };
  ArrowSchema raw_schema{};
  if (const int rc = s->get_schema(s, &raw_schema); rc != 0) return producer_error("get_schema", rc);
  std::shared_ptr<ArrowSchema> schema = own_schema(&raw_schema);
  for (int64_t chunk = 0;; ++chunk) {
    ArrowArray array{};
    if (const int rc = s->get_next(s, &array); rc != 0) return producer_error("get_next", rc);
    if (array.release == nullptr) break;  // the end of the stream
    Status st = append_arrow_array(*schema, &array, out);
    if (!st.ok()) return st.with_context(fmt::format("Arrow stream: array {}", chunk + 1));
  }
  return Status();
}

}  // namespace infercost::python
