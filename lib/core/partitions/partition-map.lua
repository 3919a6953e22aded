--[[
  Reads the map of a partitioned queue (lib/core/partitions/map-check.ts), writing it first
  when the queue has none: how many partitions it has and had, and the map's epoch, which a
  resize moves on (resize-map.lua, docs/scale-out.md). It lives on a slot of its own, found
  without knowing the number of partitions. Idempotent: a replay changes nothing.

  Input:
    KEYS[1]      the map '{<prefix>:{<name>#}:pmap', a hash: n -> the number of partitions,
                 epoch -> the map's version, sizes -> the numbers it had, oldest first
                 (absent until the first resize), hold -> '1' while a resize's new partitions
                 wait for the old ones' jobs of the keys they received

    ARGV[1]      partitions: the number the calling object declares, written when there is no map

  Output:
    { n, epoch, sizes ('' never resized), hold ('' none) } as stored
]]
redis.call('HSETNX', KEYS[1], 'n', ARGV[1])
redis.call('HSETNX', KEYS[1], 'epoch', 1)
local m = redis.call('HMGET', KEYS[1], 'n', 'epoch', 'sizes', 'hold')
return { m[1], m[2], m[3] or '', m[4] or '' }
