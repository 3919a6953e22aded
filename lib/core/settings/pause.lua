--[[
  Stops or restarts leasing; adds go on (lib/core/management/inspector.ts setPaused()). A paused
  queue's lease calls lease nothing and drop the wake-up tokens, so resuming wakes a blocked
  leaser.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      paused: 'pause' | 'resume'

  Output:
    1

  Events:
    paused, resumed
]]
eventsArg = ARGV[1] == '1'
if ARGV[2] == 'pause' then
  redis.call('HSET', K_META, 'paused', '1')
  emit({ type = 'paused' })
else
  if redis.call('HDEL', K_META, 'paused') == 1 then wakeNeeded = true end
  emit({ type = 'resumed' })
end
flushWake()
flushEvents()
return 1
