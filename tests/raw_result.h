// Hand-made result files for tests and fuzz seeds: any header over any data, as a hostile writer would make them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace parity::testing {

/// Writes `header` (the JSON text of a result file's header, or format 2's binary header with `major` 2) and `data`
/// (its blobs, from offset 0) as a result file of format `major`.0, with the preamble and padding of
/// docs/format.md; nothing in the header is checked.
inline void write_raw_result(const std::filesystem::path& file, const std::string& header, const std::string& data,
                             std::uint32_t major = 1) {
  std::string bytes = "PARITYR\n";
  auto put = [&bytes](std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  put(major, 4), put(0, 4), put(header.size(), 8);
  bytes += header;
  bytes.resize((bytes.size() + 63) / 64 * 64, '\0');
  bytes += data;
  std::ofstream(file, std::ios::binary) << bytes;
}

/// The header of a result whose outputs are `count` nodes of `node_json` (each naming blob 0 of `blob_size`
/// bytes), in one list: a small file that names one blob many times.
inline std::string shared_blob_header(const std::string& node_json, int count, std::uint64_t blob_size) {
  std::string items;
  for (int i = 0; i < count; ++i) items += (i ? "," : "") + node_json;
  return R"({"outputs":{"kind":"list","type":"builtins.list","items":[)" + items +
         R"(]},"blobs":[{"offset":0,"nbytes":)" + std::to_string(blob_size) + "}]}";
}

/// Format 2's binary header, byte by byte (docs/format.md): tags, numbers and strings as a hostile writer puts them.
struct Header2 {
  std::string bytes;
  Header2& byte(std::uint8_t b) {
    bytes += static_cast<char>(b);
    return *this;
  }
  Header2& varint(std::uint64_t v) {
    for (; v >= 0x80; v >>= 7) bytes += static_cast<char>((v & 0x7f) | 0x80);
    return byte(static_cast<std::uint8_t>(v));
  }
  Header2& text(const std::string& s) {
    varint(s.size());
    bytes += s;
    return *this;
  }
  /// A name or dtype table entry given for the first time: 0, then its text.
  Header2& fresh(const std::string& s) { return varint(0).text(s); }
};

/// Format 2's tags (src/parity/codec/codec_internal.h, Tag).
enum Tag2 : std::uint8_t {
  kDict2,
  kList2,
  kTuple2,
  kNone2,
  kFalse2,
  kTrue2,
  kInt2,
  kFloat2,
  kComplex2,
  kStr2,
  kBytes2,
  kArray2,
  kScalar2,
  kObject2,
  kRef2
};

/// The format-2 header of a list of `count` float64 arrays of `n` elements `stride` bytes apart (0: a broadcast), each
/// naming the blob at offset 0 of `blob_size` bytes: a small file that names one blob many times.
inline std::string shared_blob_header2(int count, std::uint64_t n, std::uint64_t blob_size, std::uint64_t misalign = 0,
                                       std::uint64_t stride = 8) {
  Header2 h;
  h.byte(kList2).fresh("builtins.list").varint(static_cast<std::uint64_t>(count));
  for (int i = 0; i < count; ++i) {
    h.byte(kArray2);
    if (i == 0)
      h.fresh("numpy.ndarray").byte(0).fresh(R"({"str":"<f8"})");
    else
      h.varint(2).byte(0).varint(1);
    h.varint(1).varint(n).varint(2 * stride).varint(0).varint(misalign).varint(0).varint(blob_size);
  }
  return h.bytes;
}

}  // namespace parity::testing
