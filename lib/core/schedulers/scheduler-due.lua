--[[
  The schedulers due for a tick, with the Redis clock (lib/core/schedulers/schedulers.ts
  tick()). Read-only. Cost: O(log S + limit) for S schedulers.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      limit: the most schedulers to return

  Output:
    { now, earliest, id1, config1, state1, id2, ... }
      now        Redis time (ms)
      earliest   the earliest next slot still to come ('' none)
      config     "<config json>\n<record template>" ('' no such scheduler)
      state      "<version>:<next slot>:<jobs made>" ('' no such scheduler)
]]
local now = nowMs()
local out = { now, '' }
for _, id in ipairs(redis.call('ZRANGEBYSCORE', K_SCHED_NEXT, '-inf', now, 'LIMIT', 0, tonumber(ARGV[1]))) do putScheduler(out, id) end
local nxt = redis.call('ZRANGEBYSCORE', K_SCHED_NEXT, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
if nxt[2] then out[2] = nxt[2] end
return out
