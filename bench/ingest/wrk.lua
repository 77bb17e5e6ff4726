-- wrk script of bench/ingest (go run ./bench/ingest writes it to a temporary file and runs wrk with it).
--
--   wrk ... -s wrk.lua URL -- MODE TAG PRIVATE_KEY PUBLIC_KEY TEAM_SLUG OCCURRED_AT BATCH ORIGIN
--
-- MODE is "server" (one server event per request, bearer private key) or "browser" (a batch of
-- BATCH page views per request, Origin header, public key in the body). Every request carries event
-- IDs no other request of any run has used (TAG, the thread number and a per-thread counter), so the
-- edge never answers a duplicate. done() prints one machine-readable BENCH line.

local threads = {}

function setup(thread)
  table.insert(threads, thread)
  thread:set("tid", #threads)
end

function init(args)
  mode, tag, private, public, slug, occurred, batch, origin =
    args[1], args[2], args[3], args[4], args[5], args[6], tonumber(args[7]), args[8]
  n, accepted, other, last_other = 0, 0, 0, 0
  wrk.method = "POST"
  if mode == "server" then
    wrk.headers["Content-Type"] = "application/json"
    wrk.headers["Authorization"] = "Bearer " .. private
  else
    -- tracker.js posts text/plain so that the browser sends no preflight.
    wrk.headers["Content-Type"] = "text/plain;charset=UTF-8"
    wrk.headers["Origin"] = origin
  end
end

local function server_body(id)
  return '{"teamSlug":"' .. slug .. '","publicKey":"' .. public .. '","eventId":"' .. id ..
    '","acquisitionId":"acq-' .. id .. '","name":"paid","customerRef":"bench-shop.myshopify.com",' ..
    '"amountCents":4900,"currency":"USD","occurredAt":"' .. occurred .. '"}'
end

-- One browser's batch: the events share the acquisition and session, as tracker.js sends them.
local function browser_body(id)
  local parts = {}
  for i = 1, batch do
    parts[i] = '{"eventId":"' .. id .. '-' .. i .. '","name":"page_view","occurredAt":"' .. occurred ..
      '","acquisitionId":"acq-' .. id .. '","sessionId":"ses-' .. id .. '","returning":false,' ..
      '"url":"https://bench.example/pricing?utm_source=ads","path":"/pricing","title":"Pricing",' ..
      '"referrer":"https://www.google.com/","firstTouch":{"utmSource":"ads","gclid":"g-1",' ..
      '"landingUrl":"https://bench.example/?utm_source=ads"}}'
  end
  return '{"key":"' .. public .. '","batch":[' .. table.concat(parts, ",") .. ']}'
end

function request()
  n = n + 1
  local id = tag .. "-" .. tid .. "-" .. n
  if mode == "server" then
    return wrk.format(nil, nil, nil, server_body(id))
  end
  return wrk.format(nil, nil, nil, browser_body(id))
end

function response(status, headers, body)
  if status == 202 then
    accepted = accepted + 1
  else
    other = other + 1
    last_other = status
  end
end

function done(summary, latency, requests)
  local acc, oth, last = 0, 0, 0
  for _, t in ipairs(threads) do
    acc = acc + t:get("accepted")
    oth = oth + t:get("other")
    if t:get("last_other") ~= 0 then last = t:get("last_other") end
  end
  local e = summary.errors
  io.write(string.format(
    "BENCH requests=%.0f duration_us=%.0f accepted=%.0f other=%.0f last_other=%.0f " ..
    "p50_us=%.0f p90_us=%.0f p99_us=%.0f max_us=%.0f mean_us=%.0f " ..
    "err_connect=%.0f err_read=%.0f err_write=%.0f err_timeout=%.0f\n",
    summary.requests, summary.duration, acc, oth, last,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    e.connect, e.read, e.write, e.timeout))
end
