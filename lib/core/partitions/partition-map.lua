--[[
  Reads the map of a partitioned queue (lib/core/partitions/partition-map.ts), writing it first
  when the queue has none: how many partitions every Queue object of the queue must declare,
  and the map's epoch, which a change of that number moves on (docs/scale-out.md). It lives on
  partition 0's slot. Idempotent: a replay changes nothing.

  Input:
    KEYS[1]      the map '{<prefix>:{<name>#0}:pmap', a hash: n -> the number of partitions, epoch -> the map's version

    ARGV[1]      partitions: the number the calling object declares

  Output:
    { n, epoch } as stored
]]
redis.call('HSETNX', KEYS[1], 'n', ARGV[1])
redis.call('HSETNX', KEYS[1], 'epoch', 1)
return redis.call('HMGET', KEYS[1], 'n', 'epoch')
