--[[
  Restarts leasing on a paused queue (lib/core/management/inspector.ts setPaused()): wakes a
  blocked leaser, whose wake-up tokens the paused queue's lease calls dropped. A partition a
  resize holds stays held ('hp' becomes 'h', partitions/fence-partition.lua).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not

  Output:
    1

  Events:
    resumed
]]
eventsArg = ARGV[1] == '1'
local was = redis.call('HGET', K_META, 'paused')
if was == 'hp' then
  redis.call('HSET', K_META, 'paused', 'h')
elseif was ~= 'h' and redis.call('HDEL', K_META, 'paused') == 1 then
  wakeNeeded = true
end
emit({ type = 'resumed' })
flushWake()
flushEvents()
return 1
