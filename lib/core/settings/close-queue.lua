--[[
  Closes a queue for adds (lib/core/settings/queue-settings.ts closeQueue()); wakes blocked
  consumers and producers.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not

  Output:
    1, 0 when it was closed already, or 'deleted' (tombstone: nothing written)

  Events:
    closed
]]
eventsArg = ARGV[1] == '1'
if isDeleted() then return 'deleted' end
local result = redis.call('HSETNX', K_META, 'closed', '1')
if result == 1 then
  emit({ type = 'closed' })
  -- Blocked consumers: one token; each consumer that sees the queue closed and drained
  -- wakes the next (leases/lease-jobs.lua). Blocked producers: one token per waiter.
  wakeNeeded = true
  local w = redis.call('ZCARD', K_WAITERS)
  if w > 0 then
    local t = {}
    for i = 1, math.min(w, 1000) do t[i] = '1' end
    callMany('RPUSH', K_NOTFULL, t)
  end
end
flushWake()
flushEvents()
return result
