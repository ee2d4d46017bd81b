#include "posvec/settings.hpp"

#include <charconv>
#include <cmath>
#include <cstdio>

namespace posvec {

std::string settingNumberText(long double value, bool integer) {
  char buf[48];
  if (integer)
    std::snprintf(buf, sizeof buf, "%.0Lf", value);
  else  // %.17g: reads back as the same double
    std::snprintf(buf, sizeof buf, "%.17g", static_cast<double>(value));
  return buf;
}

void refuseSetting(const Setting& setting, const Bounds& b, const std::string& got) {
  // Bounds are whole numbers unless an end is open (a rate in (0, 10]) or fractional.
  const auto end = [](long double v) {
    return settingNumberText(v, v == std::floor(v) && std::fabs(v) < 1e18L);
  };
  std::string range;
  if (b.loOpen || b.hiOpen) {
    range = std::string("in ") + (b.loOpen ? "(" : "[") + end(b.lo) + ", " + end(b.hi) +
            (b.hiOpen ? ")" : "]");
  } else {
    const std::string lo =
        end(b.lo) + (b.loNote.empty() ? std::string() : " (" + std::string(b.loNote) + ")");
    range = !b.hasHi         ? (b.loNote.empty() ? "at least " + lo : lo + " or more")
                             : "between " + lo + " and " + end(b.hi);
  }
  const std::string note = b.note.empty() ? std::string() : std::string(b.note) + "; ";
  throw ConfigError(ErrorText::about(setting) << " must be " << range << " (" << note << "got "
                                              << got << ")");
}

namespace detail {

bool readNumber(std::string_view text, long long& out) {
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && p == end;
}

bool readNumber(std::string_view text, unsigned long long& out) {
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && p == end;
}

bool readNumber(std::string_view text, double& out) {
  const char* end = text.data() + text.size();
  const auto [p, ec] = std::from_chars(text.data(), end, out);
  return ec == std::errc() && p == end && std::isfinite(out);
}

}  // namespace detail

}  // namespace posvec
