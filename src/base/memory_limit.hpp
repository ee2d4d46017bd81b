// The memory a request may ask for: the machine's physical memory, and the
// "needs 3.2 GB" figure that refusals quote. Stages check a request against it
// before they allocate or compute anything for it.
#pragma once

#include <unistd.h>

#include <sstream>
#include <string>

namespace posvec::detail {

// Bytes of physical memory (1e18 when the system does not say: the allocator decides).
inline double physicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES);
  const long pageSize = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || pageSize <= 0) return 1e18;
  return static_cast<double>(pages) * static_cast<double>(pageSize);
}

// "3.2 GB", "80 MB", "512 bytes" (decimal units, three significant digits).
inline std::string formatBytes(double bytes) {
  std::ostringstream s;
  s.precision(3);
  if (bytes >= 1e9)
    s << bytes / 1e9 << " GB";
  else if (bytes >= 1e6)
    s << bytes / 1e6 << " MB";
  else
    s << bytes << " bytes";
  return s.str();
}

}  // namespace posvec::detail
