--[[
  A blocked producer gives up (lib/core/backpressure/backpressure.ts): its add got room, timed
  out, or its Queue object closes.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      waiter: the producer's waiter id

  Output:
    1
]]
redis.call('ZREM', K_WAITERS, ARGV[1])
if redis.call('ZCARD', K_WAITERS) == 0 then redis.call('DEL', K_NOTFULL) end
return 1
