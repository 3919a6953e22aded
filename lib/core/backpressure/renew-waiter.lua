--[[
  A blocked producer is still there (lib/core/backpressure/backpressure.ts, every ttl/3 while
  it waits). Forgets expired (crashed) waiters and, if that frees the way, wakes the next one.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      waiter: the producer's waiter id
    ARGV[2]      ttlMs: its registration lasts this long (ms)

  Output:
    1
]]
local now = nowMs()
redis.call('ZADD', K_WAITERS, now + tonumber(ARGV[2]), ARGV[1])
if redis.call('ZREMRANGEBYSCORE', K_WAITERS, '-inf', now) > 0 then
  -- a crashed waiter may have been ahead in line with slots free: wake the next one
  local bound = tonumber(redis.call('HGET', K_META, 'bound')) or 0
  if bound > 0 then
    local free = bound - unfinishedCount()
    if free > 0 then notifyWaiters(free) end
  end
end
return 1
