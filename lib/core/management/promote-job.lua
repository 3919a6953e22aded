--[[
  Makes one delayed job pending now (lib/core/management/management.ts promote()), in its
  priority or group as if it had come due. Cost: O(log D) for D delayed jobs, plus O(log P)
  for a prioritized job and O(position) in its due time's tie list (adds/delayed.lua).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      id: the job's id

  Output:
    1 promoted, 0 the job is not delayed (or does not exist): nothing written

  Events:
    promoted
]]
eventsArg = ARGV[1] == '1'
local id = ARGV[2]
if not redis.call('ZSCORE', K_DELAYED, id) or redis.call('HEXISTS', K_JOBS, id) == 0 then return 0 end
unDelay(id)
promoteIds({ id })
refreshNextDue()
flushWake()
flushEvents()
return 1
