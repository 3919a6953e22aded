--[[
  Reads schedulers with the Redis clock (lib/core/schedulers/schedulers.ts): the due ones for a
  tick, the clock alone for an upsert, or all of them. Read-only. Cost: 'due' O(log S +
  limit), 'now' O(1), 'all' O(S) for S schedulers.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      mode: 'due' | 'now' | 'all'
    ARGV[2]      limit: 'due': the most schedulers to return

  Output:
    { now, earliest, id1, config1, state1, id2, ... }
      now        Redis time (ms)
      earliest   'due': the earliest next slot still to come ('' none); else ''
      config     "<config json>\n<record template>" ('' no such scheduler)
      state      "<version>:<next slot>:<jobs made>" ('' no such scheduler)
]]
local now = nowMs()
local out = { now, '' }
local function put(id)
  out[#out + 1] = id
  out[#out + 1] = redis.call('HGET', K_SCHEDS, id) or ''
  out[#out + 1] = redis.call('HGET', K_SCHED_STATE, id) or ''
end
local mode = ARGV[1]
if mode == 'due' then
  for _, id in ipairs(redis.call('ZRANGEBYSCORE', K_SCHED_NEXT, '-inf', now, 'LIMIT', 0, tonumber(ARGV[2]))) do put(id) end
  local nxt = redis.call('ZRANGEBYSCORE', K_SCHED_NEXT, '(' .. now, '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if nxt[2] then out[2] = nxt[2] end
elseif mode == 'all' then
  for _, id in ipairs(redis.call('HKEYS', K_SCHEDS)) do put(id) end
end
return out
