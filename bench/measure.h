// What both benchmarks measure with: process memory from /proc, the peak reset, free-memory warming, medians, units.
// The method is described once, in bench/README.md ("Method").
#pragma once

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace parity::bench {

inline constexpr double kMB = 1e6;  // 10^6 bytes: an array of 100,000,000 float64 is "800 MB"

/// The memory lines of /proc/self/status, in kB.
struct Status {
  long rss = 0, hwm = 0, anon = 0, file = 0, shmem = 0;
};

inline Status read_status() {
  Status s;
  std::ifstream in("/proc/self/status");
  const std::map<std::string, long Status::*> fields = {{"VmRSS:", &Status::rss},
                                                        {"VmHWM:", &Status::hwm},
                                                        {"RssAnon:", &Status::anon},
                                                        {"RssFile:", &Status::file},
                                                        {"RssShmem:", &Status::shmem}};
  std::string line, key;
  long value = 0;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    if (words >> key >> value)
      if (auto it = fields.find(key); it != fields.end()) s.*(it->second) = value;
  }
  return s;
}

/// Writing "5" to clear_refs sets the peak (VmHWM) back to the current RSS (Linux >= 4.0), so the next VmHWM read
/// is the peak of what ran in between.
inline bool reset_peak() {
  std::ofstream out("/proc/self/clear_refs");
  out << "5";
  out.flush();
  return static_cast<bool>(out);
}

/// Faults in `bytes` of fresh anonymous memory (huge pages, as NumPy asks for them) and frees it. The VM of
/// bench/README.md hands memory left free for about 2 s back to its host, and the next allocation of fresh pages
/// then pays 1-3 s per GB to get it back; warming right before the clock starts lets every method find host-backed
/// free pages, as it would on bare metal.
inline void warm_anonymous_memory(std::size_t bytes) {
  if (bytes == 0) return;
  void* at = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) return;
  ::madvise(at, bytes, MADV_HUGEPAGE);
  for (std::size_t i = 0; i < bytes; i += 4096) static_cast<volatile char*>(at)[i] = 1;
  ::munmap(at, bytes);
}

inline double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

inline std::string fmt(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

/// Milliseconds with three significant digits or so.
inline std::string ms(double seconds) {
  const double m = seconds * 1e3;
  return m >= 100 ? fmt("%.0f", m) : m >= 10 ? fmt("%.1f", m) : m >= 1 ? fmt("%.2f", m) : fmt("%.3f", m);
}

/// MB with one decimal; "?" where the peak could not be measured (negative).
inline std::string mb(double v) { return v < 0 ? "?" : fmt("%.1f", v); }

}  // namespace parity::bench
