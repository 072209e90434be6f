// Redaction: secrets taken out of the process command lines a report keeps,
// so that reports, journals and CI artifacts do not carry a vLLM --api-key or
// an HF_TOKEN=... (--no-redact turns it off). docs/report.md lists the rules.
// Pure functions; thread-safe.
#pragma once

#include <string>

#include "fleetreap/report/report.h"

namespace fleetreap {

/// What a secret value is replaced with.
inline constexpr char kRedacted[] = "<redacted>";

/// "cmdline" (words separated by spaces, as Holder::cmdline keeps it) with
/// every secret value replaced by kRedacted:
///  - the value of a flag whose name, without its dashes, lowercased and
///    with '_' as '-', is "token" or ends in "-token", contains "secret",
///    "password" or "passwd", or is or ends in "api-key", "apikey",
///    "access-key", "private-key": "--api-key=X", "--api-key X",
///    "-token X" (the next word, unless it starts with "--");
///  - the value of a NAME=VALUE word whose NAME (letters, digits, '_';
///    compared uppercased) is or ends in "TOKEN", contains "SECRET",
///    "PASSWORD" or "PASSWD", or ends in "API_KEY", "APIKEY", "ACCESS_KEY",
///    "PRIVATE_KEY": "HF_TOKEN=hf_x", "AWS_SECRET_ACCESS_KEY=...";
///  - the password of a URL's user info: "https://u:<redacted>@host/".
/// "--tokenizer X" and "TOKENIZERS_PARALLELISM=false" are kept.
std::string RedactCommandLine(const std::string& cmdline);

/// Every holder's cmdline of "host" through RedactCommandLine.
void RedactHostReport(HostReport* host);

}  // namespace fleetreap
