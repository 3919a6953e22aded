--[[
  The registry of a prefix's queue names (lib/core/registry/registry.ts): one sorted set outside
  every queue's hash tag, so that queues can be listed without KEYS or SCAN. It lives in a
  slot of its own on a Cluster, so no queue script can write it: a Queue object registers its
  queue with this call before its first write, and deleteQueue() unregisters it after the
  delete script. Both are idempotent: a replay changes nothing.

  Input:
    KEYS[1]      the registry '{<prefix>:}:queues', a sorted set: name -> first-seen time (ms, Redis clock)

    ARGV[1]      verb: 'add' | 'remove'
    ARGV[2]      name: the queue's name

  Output:
    1 when the call changed the registry, 0 when the name was already (or still not) there
]]
if ARGV[1] == 'add' then
  return redis.call('ZADD', KEYS[1], 'NX', nowMs(), ARGV[2])
end
return redis.call('ZREM', KEYS[1], ARGV[2])
