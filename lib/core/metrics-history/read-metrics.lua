--[[
  Reads a queue's metrics history (lib/core/metrics-history/metrics-history.ts getMetrics()):
  the minutes from..to (Redis time when `to` is left out), at most `maxMinutes` of them, the
  last ones when more are asked for. Minutes that expired or saw nothing read as empty.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      from: epoch ms, '' for `minutes` minutes up to `to`
    ARGV[2]      to: epoch ms, '' for now
    ARGV[3]      minutes: the range read when `from` is left out
    ARGV[4]      maxMinutes: most minutes read

  Output:
    { keepMinutes, first, now, then per minute from first: its hash as field, value, ... }
      keepMinutes  the queue's metrics.keepMinutes, 0 when it keeps no history
      first        the first minute read (epoch ms / 60000)
      now          Redis time (ms)
]]
local now = nowMs()
local last = math.floor((tonumber(ARGV[2]) or now) / metricsHistory.MINUTE_MS)
local first = last - tonumber(ARGV[3]) + 1
if ARGV[1] ~= '' then first = math.floor(tonumber(ARGV[1]) / metricsHistory.MINUTE_MS) end
first = math.max(first, last - tonumber(ARGV[4]) + 1)
local out = { tonumber(redis.call('HGET', K_META, 'mx')) or 0, first, now }
for m = first, last do out[#out + 1] = redis.call('HGETALL', metricsHistory.key(m)) end
return out
