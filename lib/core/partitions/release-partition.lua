--[[
  Ends the hold of a partition a resize added (fence-partition.lua), once the partitions that
  gave it keys hold none of those keys' unfinished jobs (lib/core/partitions/resize.ts): it
  leases from then on, and its waiting jobs wake a worker. A hold an operator's pause joined
  ('hp') stays a pause. Idempotent.

  Input:
    KEYS[1..15]  the partition's queue keys (redis/keys.lua)

  Output:
    1 released now, 0 it was not held
]]
local paused = redis.call('HGET', K_META, 'paused')
if paused == 'h' then
  redis.call('HDEL', K_META, 'paused')
  wakeNeeded = true
elseif paused == 'hp' then
  redis.call('HSET', K_META, 'paused', '1')
else
  return 0
end
flushWake()
return 1
