// Transparent huge pages for large matrices. Training reads rows scattered over
// matrices of hundreds of megabytes (gigabytes with n-gram buckets): with 4 KiB
// pages nearly every row is a TLB miss, with 2 MiB pages the whole matrix fits
// the TLB. Fresh large arrays also spend less time in page faults (as NumPy
// advises for big arrays). Where the system gives huge pages only on request
// (Debian's default, "madvise"), this is the request. Only a hint: failure is
// harmless, and it must come before the memory is first touched.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>

namespace posvec::detail {

inline void adviseHugePages(void* data, std::size_t bytes) {
#ifdef MADV_HUGEPAGE
  if (data == nullptr || bytes < (std::size_t{8} << 20)) return;
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  const auto begin = (reinterpret_cast<std::uintptr_t>(data) + page - 1) / page * page;
  const auto end = (reinterpret_cast<std::uintptr_t>(data) + bytes) / page * page;
  if (end > begin) ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

// A matrix's buffer, whatever its element type.
template <class Matrix>
void adviseHugePages(Matrix& m) {
  adviseHugePages(m.data(), static_cast<std::size_t>(m.size()) * sizeof(*m.data()));
}

}  // namespace posvec::detail
