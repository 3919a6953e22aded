--[[
  Creates or replaces a scheduler (lib/core/queue/schedulers.ts upsertScheduler()), with a
  compare-and-set on its version: the client read the version and computed the first slot
  from the Redis time of that read. A replaced scheduler's job made ahead of time goes
  (while still delayed) and its count starts again. Replayed after a lost reply, the
  version no longer matches and nothing is written (the client then finds its config
  stored). Cost: O(log D) for D delayed jobs.

  Input:
    KEYS[1..15]  the queue keys (include/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      scheduler id
    ARGV[3]      the version read ('0': none)
    ARGV[4]      config: "<config json>\n<record template>"
    ARGV[5]      first slot (ms), '' when no slot is left (ended before it began)
    ARGV[6]      the first slot's job record

  Output:
    0 the version changed since the read: nothing written; else written, and 2 when the
    first slot's job was created, 1 when not (no slot left, a closed queue, or it existed)

  Events:
    added (the first slot's job), removed (the replaced job made ahead)
]]
eventsArg = ARGV[1] == '1'
local id, expected, first = ARGV[2], tonumber(ARGV[3]), ARGV[5]
local v, nxt = schedState(id)
if (v or 0) ~= expected then return 0 end
if nxt then dropAheadJob(id, nxt) end
redis.call('HSET', K_SCHEDS, id, ARGV[4])
local made, created = 0, 0
if first ~= '' then
  created = addSlotJob(id, first, ARGV[6], nowMs)
  made = 1
end
setSchedState(id, expected + 1, first ~= '' and first or nil, made)
flushWake()
flushEvents()
return 1 + created
