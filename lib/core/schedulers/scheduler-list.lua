--[[
  Every scheduler of the queue (lib/core/schedulers/schedulers.ts list()). Read-only. Cost:
  O(S) for S schedulers.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

  Output:
    { id1, config1, state1, id2, ... }
      config     "<config json>\n<record template>" ('' no such scheduler)
      state      "<version>:<next slot>:<jobs made>" ('' no such scheduler)
]]
local out = {}
for _, id in ipairs(redis.call('HKEYS', K_SCHEDS)) do putScheduler(out, id) end
return out
