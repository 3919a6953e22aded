--[[
  Removes a scheduler (lib/core/schedulers/schedulers.ts removeScheduler()): its config, state
  and index entry, and its next slot's job while that is still delayed (made ahead, not yet
  due). Jobs of slots that came due stay: they are runs. Cost: O(log S + log D).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      id: the scheduler's id

  Output:
    1 removed, 0 no such scheduler

  Events:
    removed (the job made ahead)
]]
eventsArg = ARGV[1] == '1'
local id = ARGV[2]
if redis.call('HEXISTS', K_SCHEDS, id) == 0 then return 0 end
local _, nxt = schedState(id)
if nxt then dropAheadJob(id, nxt) end
redis.call('HDEL', K_SCHEDS, id)
redis.call('HDEL', K_SCHED_STATE, id)
redis.call('ZREM', K_SCHED_NEXT, id)
flushWake()
flushEvents()
return 1
