// Hand-made result files for tests and fuzz seeds: any header over any data, as a hostile writer would make them.
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

namespace parity::testing {

/// Writes `header` (the JSON text of a result file's header) and `data` (its blobs, from offset 0) as a result
/// file of format 1.0, with the preamble and padding of docs/format.md; nothing in the header is checked.
inline void write_raw_result(const std::filesystem::path& file, const std::string& header, const std::string& data) {
  std::string bytes = "PARITYR\n";
  auto put = [&bytes](std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  put(1, 4), put(0, 4), put(header.size(), 8);
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

}  // namespace parity::testing
