--[[
  Stops leasing; adds go on (lib/core/management/inspector.ts setPaused()). A paused queue's
  lease calls lease nothing and drop the wake-up tokens, so resuming (resume-queue.lua) wakes
  a blocked leaser. A partition a resize holds (paused 'h', partitions/fence-partition.lua)
  becomes 'hp': held and paused, each ended by its own call.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not

  Output:
    1

  Events:
    paused
]]
eventsArg = ARGV[1] == '1'
local was = redis.call('HGET', K_META, 'paused')
redis.call('HSET', K_META, 'paused', (was == 'h' or was == 'hp') and 'hp' or '1')
emit({ type = 'paused' })
flushEvents()
return 1
