--[[
  Unlists a partitioned queue and its number of partitions (register-partitioned.lua), after
  its deleteQueue(). Idempotent: a replay changes nothing.

  Input:
    KEYS[1]      the registry '{<prefix>:}:queues', a sorted set: name -> first-seen time (ms, Redis clock)
    KEYS[2]      '{<prefix>:}:partitioned', a hash: name -> number of partitions

    ARGV[1]      name: the queue's name

  Output:
    1 when the name was removed, 0 when it was not there
]]
redis.call('HDEL', KEYS[2], ARGV[1])
return redis.call('ZREM', KEYS[1], ARGV[1])
