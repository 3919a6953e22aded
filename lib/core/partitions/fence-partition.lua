--[[
  One partition's part in a resize (lib/core/partitions/resize.ts). Every partition learns the
  map's new epoch: from then on it refuses an add routed with an older map (adds/add.lua,
  backpressure/produce.lua answer 'moved', and the producer reads the map again), so no job
  of a key that moved lands behind the move. A new partition is also held: it leases nothing
  until the handover releases it (release-partition.lua), by the pause flag's value 'h' ('hp'
  when an operator paused it too: settings/pause-queue.lua, resume-queue.lua). The workers
  subscribed to the partition's wake-ups hear 'map' and read the map again. Idempotent: the
  epoch only grows, and a partition is held once per epoch (meta ph), so a late call of a
  handover that another call ended does not hold it again.

  Input:
    KEYS[1..15]  the partition's queue keys (redis/keys.lua)

    ARGV[1]      epoch: the map's epoch of the resize
    ARGV[2]      hold: '1' for a partition the resize adds, '0' for one it had

  Output:
    1
]]
local epoch = tonumber(ARGV[1])
local m = redis.call('HMGET', K_META, 'pe', 'ph')
local news = false
if (tonumber(m[1]) or 0) < epoch then
  redis.call('HSET', K_META, 'pe', epoch)
  news = true
end
if ARGV[2] == '1' and (tonumber(m[2]) or 0) < epoch then
  redis.call('HSET', K_META, 'ph', epoch)
  local paused = redis.call('HGET', K_META, 'paused')
  if not paused then
    redis.call('HSET', K_META, 'paused', 'h')
  elseif paused == '1' then
    redis.call('HSET', K_META, 'paused', 'hp')
  end
end
if news then redis.call('SPUBLISH', K_TAG .. ':wakes', 'map') end
return 1
