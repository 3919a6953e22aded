--[[
  Lists a queue's name in the registry of a prefix's queue names (lib/core/registry/registry.ts):
  one sorted set outside every queue's hash tag, so that queues can be listed without KEYS or
  SCAN. It lives in a slot of its own on a Cluster, so no queue script can write it: a Queue
  object registers its queue with this call before its first write, and deleteQueue()
  unregisters it after the delete script (unregister-queue.lua). Idempotent: a replay changes
  nothing, and the first-seen time stays.

  Input:
    KEYS[1]      the registry '{<prefix>:}:queues', a sorted set: name -> first-seen time (ms, Redis clock)

    ARGV[1]      name: the queue's name

  Output:
    1 when the name was added, 0 when it was already there
]]
return redis.call('ZADD', KEYS[1], 'NX', nowMs(), ARGV[1])
