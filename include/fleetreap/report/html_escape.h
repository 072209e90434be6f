// HtmlEscape: text a host controls (host names, process names, command
// lines, messages) made safe to put in an HTML document, as element text or
// or as a quoted attribute value. Pure function; thread-safe.
#pragma once

#include <string>

namespace fleetreap {

/// "text" made valid UTF-8 (ReplaceInvalidUtf8), then & < > " ' written as
/// the entities &amp; &lt; &gt; &quot; &#39;, and every control character but
/// tab and line feed (C0, DEL) replaced by U+FFFD, so nothing a host says can
/// close an element or an attribute, open a tag or reach the parser as a
/// control byte. Safe in element text and in attribute values quoted with "
/// or '; never use it for a URL or inside <script>.
std::string HtmlEscape(const std::string& text);

}  // namespace fleetreap
