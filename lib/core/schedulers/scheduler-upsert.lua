--[[
  Creates or replaces a scheduler (lib/core/schedulers/schedulers.ts upsertScheduler()) in one
  call, whatever another writer did since the client read the Redis time it computed the
  first slot from: of upserts of one id at once, the last to run wins, none needs to try
  again. The same config again writes nothing. A replaced scheduler's job made ahead of time
  goes (while still delayed), its count starts again, and its version moves on, so that a
  tick that read the old one writes nothing (scheduler-advance.lua). Replayed after a lost
  reply, it finds its config stored and writes nothing. Cost: O(log D) for D delayed jobs.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      id: the scheduler's id
    ARGV[3]      config: "<config json>\n<record template>"
    ARGV[4]      firstSlot: the first slot (ms), '' when no slot is left (ended before it began)
    ARGV[5]      record: the first slot's job record

  Output:
    0 the same config was stored: nothing written; else written, and 2 when the first slot's
    job was created, 1 when not (no slot left, a closed queue, or it existed)

  Events:
    added (the first slot's job), removed (the replaced job made ahead)
]]
eventsArg = ARGV[1] == '1'
local id, config, first = ARGV[2], ARGV[3], ARGV[4]
if redis.call('HGET', K_SCHEDS, id) == config then return 0 end
local v, nxt = schedState(id)
if nxt then dropAheadJob(id, nxt) end
redis.call('HSET', K_SCHEDS, id, config)
local made, created = 0, 0
if first ~= '' then
  created = addSlotJob(id, first, ARGV[5], nowMs)
  made = 1
end
setSchedState(id, (v or 0) + 1, first ~= '' and first or nil, made)
flushWake()
flushEvents()
return 1 + created
