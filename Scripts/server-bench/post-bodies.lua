-- wrk: POST /v1/transactions with the bodies of BODIES (one per line), each thread walking its own stride of them,
-- so the first pass records new transactions and later passes re-post recorded ones (as apps do at every launch).
-- Several wrk processes share the bodies with STRIDE=N (how many there are) and OFFSET=i (which one this is, from 0):
-- each posts its own share, as different devices post different transactions to the instances behind a balancer.
-- THREADS must equal wrk's -t (the threads' scripts cannot see how many there are).
local path = os.getenv("BODIES")
local stride = tonumber(os.getenv("STRIDE") or "1")
local offset = tonumber(os.getenv("OFFSET") or "0")
local step = stride * tonumber(os.getenv("THREADS") or "1")
local bodies = {}
for line in io.lines(path) do bodies[#bodies + 1] = line end
local threads = 0
function setup(thread)
  thread:set("id", offset + threads * stride)
  threads = threads + 1
end
local count = 0
local headers = { ["Content-Type"] = "application/json" }
function request()
  local index = (count * step + id) % #bodies + 1
  count = count + 1
  return wrk.format("POST", "/v1/transactions", headers, bodies[index])
end
function done(summary, latency, requests)
  local non2xx = summary.errors.status
  io.write(string.format("RESULT requests=%d seconds=%.2f rps=%.0f p50_ms=%.2f p99_ms=%.2f non2xx=%d errors=%d\n",
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(99) / 1000, non2xx,
    summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout))
end
