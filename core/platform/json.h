// JSON string quoting for the tools and trace writers that emit JSON by hand.
//
//   absl::StrAppend(&out, "{\"name\":", JsonQuote(node.name()), "}");
//
// The result is always valid JSON: quotes, backslashes and control
// characters are escaped, valid UTF-8 passes through unchanged, and bytes
// that are not valid UTF-8 become U+FFFD.
#ifndef TENSORGRID_CORE_PLATFORM_JSON_H_
#define TENSORGRID_CORE_PLATFORM_JSON_H_

#include <string>

#include "absl/strings/string_view.h"

namespace tensorgrid {

// `text` as a double-quoted JSON string.
std::string JsonQuote(absl::string_view text);

}  // namespace tensorgrid

#endif  // TENSORGRID_CORE_PLATFORM_JSON_H_
