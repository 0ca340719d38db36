-- wrk: POST /v1/transactions with each body of BODIES (one per line) once, then stop: every request records a new
-- transaction (and, with webhooks, one event).
local path = os.getenv("BODIES")
local bodies = {}
for line in io.lines(path) do bodies[#bodies + 1] = line end
local next = 0
local headers = { ["Content-Type"] = "application/json" }
function request()
  next = next + 1
  if next > #bodies then
    wrk.thread:stop()
    return wrk.format("GET", "/health")
  end
  return wrk.format("POST", "/v1/transactions", headers, bodies[next])
end
function done(summary, latency, requests)
  io.write(string.format("RESULT requests=%d seconds=%.2f rps=%.0f non2xx=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6), summary.errors.status))
end
