--[[
  A queue's metrics history (lib/core/metrics-history/, docs/observability.md): per minute,
  the attempts its settles ended (c completed, f failed and retried, d dead) and how long
  they ran, as counts per run-time bucket, kept `metrics.keepMinutes`. Only a queue that keeps
  one pays for it: its lease tokens say so ('!<keepMinutes>' after the lease start,
  redis/lease-token.lua), so settling a plain queue's token costs one plain search for '!'
  that fails. A call adds up its settles first (note) and writes each touched field once at its
  end (flush): a few HINCRBY per call, whatever its number of jobs.

  Key: '<tag>:mx:<minute>' (minute = Redis time / 60000) hash c, f, d and '<bucket>' -> count.
  Its first write of a field sets its expiry, keepMinutes after the minute ends: nothing is
  scanned, old minutes expire. Bucket 0 holds run times under 1 ms; bucket b >= 1 those in
  (2^((b-2)/4), 2^((b-1)/4)] ms (1 ms in bucket 1), the last one everything longer
  (lib/core/metrics-history/buckets.ts reads them back). Needs redis/keys.lua, redis/calls.lua.

  Functions in one table: the prelude is close to Lua's 200 locals.
]]
local metricsHistory = {
  MINUTE_MS = 60000,
  STEPS = 5.7707801635558535, -- 4 buckets per doubling: 4 / ln 2 (math is out of reach while the library loads)
  TOP = 161, -- the last bucket: 2^40 ms and longer
  -- a token's lease start and keepMinutes (the token's start is anchored: a group may hold '!')
  PATTERN = '^[%w_%-]+%.%d+@(%d+)!(%d+)',
}

-- The key of minute `minute` of the queue bound now.
function metricsHistory.key(minute)
  return K_TAG .. ':mx:' .. string.format('%d', minute)
end

function metricsHistory.bucket(ms)
  if ms < 1 then return 0 end
  -- the epsilon keeps an exact power of two in its own bucket despite rounding
  return math.min(metricsHistory.TOP, 1 + math.ceil(math.log(ms) * metricsHistory.STEPS - 1e-9))
end

function metricsHistory.add(acc, field, n)
  local c = acc.counts[field]
  if not c then acc.fields[#acc.fields + 1] = field end
  acc.counts[field] = (c or 0) + n
end

-- Adds a settled attempt of lease `token` to `acc` (made here on the first one; nil stays nil
-- for a queue that keeps no history): `field` c, f or d; with `timed`, its run time from the
-- lease start to `now`. Returns acc.
function metricsHistory.note(acc, token, field, now, timed)
  -- a plain search first: a token without '!' (every queue without a history) costs no pattern match
  if type(token) ~= 'string' or not string.find(token, '!', 1, true) then return acc end
  local start, keep = string.match(token, metricsHistory.PATTERN)
  if not keep then return acc end
  if not acc then acc = { keep = 0, fields = {}, counts = {} } end
  keep = tonumber(keep)
  if keep > acc.keep then acc.keep = keep end
  metricsHistory.add(acc, field, 1)
  -- as text: Redis formats a number argument as a float (redis/calls.lua int)
  if timed then metricsHistory.add(acc, int(metricsHistory.bucket(math.max(0, now - tonumber(start)))), 1) end
  return acc
end

-- Writes what `acc` holds into the minute of `now`: one HINCRBY per field, and its expiry
-- when a field was new (the minute's first writes; PEXPIREAT of the same time again is harmless).
function metricsHistory.flush(acc, now)
  if not acc then return end
  local minute = math.floor(now / metricsHistory.MINUTE_MS)
  local key = metricsHistory.key(minute)
  local fresh = false
  for _, f in ipairs(acc.fields) do
    local n = acc.counts[f]
    if redis.call('HINCRBY', key, f, n) == n then fresh = true end
  end
  if fresh then redis.call('PEXPIREAT', key, string.format('%d', (minute + 1 + acc.keep) * metricsHistory.MINUTE_MS)) end
end

-- The keys of the minutes a history of `keep` minutes may hold at `now` (deleteQueue).
function metricsHistory.keys(keep, now)
  local out = {}
  if not keep or keep <= 0 then return out end
  local last = math.floor(now / metricsHistory.MINUTE_MS)
  for m = last - keep - 1, last + 1 do out[#out + 1] = metricsHistory.key(m) end
  return out
end
