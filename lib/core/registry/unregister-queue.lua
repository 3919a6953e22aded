--[[
  Unlists a queue's name from the registry of a prefix's queue names (lib/core/registry/registry.ts),
  after deleteQueue()'s delete script, or when the call it was listed for found the queue
  deleted. Idempotent: a replay changes nothing.

  Input:
    KEYS[1]      the registry '{<prefix>:}:queues', a sorted set: name -> first-seen time (ms, Redis clock)

    ARGV[1]      name: the queue's name

  Output:
    1 when the name was removed, 0 when it was not there
]]
return redis.call('ZREM', KEYS[1], ARGV[1])
