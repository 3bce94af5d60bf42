// The one dashboard page of every HTTP face (`serve` at / and /dashboard,
// the LLM proxy at /dashboard): a self-contained HTML document (inline CSS
// and JS, no external asset, no CDN) that polls /toolcache/stats (the one
// stats shape, src/runtime/stats.h) every 2 s and shows calls, hits and
// would-hits per tool, time, tokens and dollars saved, prompt-cache breaks
// with their causes, bypass reasons and recent invalidations, and an SVG
// chart with axes, units and times. Element ids are part of the contract
// of tests/browser/dashboard.test.mjs.
//
// DashboardCsp() is the Content-Security-Policy the page must be served
// with: nothing but this page's own inline script and style (by SHA-256)
// and fetches to its own origin.
//
// Thread-safety: both return views of immutable strings built once.
//
// Example:
//   res->Send(200, {{"content-type", "text/html; charset=utf-8"},
//                   {"content-security-policy",
//                    std::string(runtime::DashboardCsp())}},
//             std::string(runtime::DashboardHtml()));
#pragma once

#include <string_view>

namespace toolcache::runtime {

std::string_view DashboardHtml();
std::string_view DashboardCsp();

}  // namespace toolcache::runtime
