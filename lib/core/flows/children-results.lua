--[[
  What a parent's children left it (lib/core/flows/flows.ts childrenResults(), a handler's
  job.childrenResults()): the results of the children that completed and how many it still
  waits for (flows/flows.lua). Read-only: it still runs when Redis refuses writes.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      id: the parent's id

  Output:
    { unfinished, id, result json, id, result json, ... }: unfinished counts the children
    the parent still waits for (0 also for a job without children, which has no results)
]]
local id = ARGV[1]
local out = { redis.call('SCARD', depsKey(id)) }
for _, v in ipairs(redis.call('HGETALL', kresKey(id))) do out[#out + 1] = v end
return out
