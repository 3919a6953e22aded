--[[
  Frees a deduplication id (lib/core/adds/producer.ts removeDeduplicationKey(),
  adds/deduplication.lua): the next add that carries it creates a job, whatever the job that
  held it does. That job stays as it is; an add kept for its end is dropped.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      id: the deduplication id

  Output:
    1 when a job held it, else 0
]]
local did = ARGV[1]
local held = dedupIds.holder(did, nowMs)
redis.call('HDEL', dedupKey('ids'), did)
redis.call('HDEL', dedupKey('next'), did)
redis.call('ZREM', dedupKey('ttl'), did)
return held and 1 or 0
