-- wrk script for `toolcache serve`: POSTs one JSON body to one path.
-- Environment: TC_PATH (default /v1/lookup), TC_BODY (the JSON body),
-- TC_TOKEN (bearer token, optional).
wrk.method = "POST"
wrk.path = os.getenv("TC_PATH") or "/v1/lookup"
wrk.body = os.getenv("TC_BODY") or
  '{"server":"bench","tool":"get_doc","arguments":{"id":1}}'
wrk.headers["Content-Type"] = "application/json"
local token = os.getenv("TC_TOKEN")
if token and token ~= "" then
  wrk.headers["Authorization"] = "Bearer " .. token
end

local statuses = {}
response = function(status, headers, body)
  statuses[status] = (statuses[status] or 0) + 1
end

done = function(summary, latency, requests)
  io.write(string.format("p50_us=%d p90_us=%d p99_us=%d rps=%.0f errors=%d\n",
    latency:percentile(50), latency:percentile(90), latency:percentile(99),
    summary.requests / (summary.duration / 1e6),
    summary.errors.status + summary.errors.connect + summary.errors.read +
    summary.errors.write + summary.errors.timeout))
end
