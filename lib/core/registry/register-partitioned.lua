--[[
  Lists a partitioned queue (lib/core/partitions/) in the registry of a prefix's queue names,
  as register-queue.lua lists a queue, and its number of partitions beside it: listQueues()
  and `relq queues` show the logical queue once, not its partitions. Idempotent: a replay
  changes nothing, and the first-seen time stays.

  Input:
    KEYS[1]      the registry '{<prefix>:}:queues', a sorted set: name -> first-seen time (ms, Redis clock)
    KEYS[2]      '{<prefix>:}:partitioned', a hash: name -> number of partitions

    ARGV[1]      name: the queue's name
    ARGV[2]      partitions: its number of partitions

  Output:
    1 when the name was added, 0 when it was already there
]]
local added = redis.call('ZADD', KEYS[1], 'NX', nowMs(), ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
return added
