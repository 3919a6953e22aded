--[[
  The queue's live workers (lib/core/workers/workers.ts getWorkers()): drops up to `limit`
  entries whose time ran out first (workers/workers.lua), then answers the others.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      limit: most entries dropped, and most answered

  Output:
    { now, ids, entries }
      now      Redis time (ms)
      ids      the live workers' ids, the soonest to expire first
      entries  per id '<started ms> <last seen ms> <info json>' (workers/workers.lua)
]]
local now = nowMs()
local limit = tonumber(ARGV[1])
workerList.prune(now, limit)
local zkey, hkey = workerList.keys()
local ids = redis.call('ZRANGEBYSCORE', zkey, '(' .. int(now), '+inf', 'LIMIT', 0, limit)
return { now, ids, hmgetMany(hkey, ids) }
