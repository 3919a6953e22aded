--[[
  Starts a resize of a partitioned queue (lib/core/partitions/resize.ts): more partitions,
  recorded in the map with a new epoch, the new ones held until the handover ends
  (handover-map.lua). Only a growth from the number the caller read, with no handover under
  way: a caller with an older map is told the map as it is, and reads it again.

  Input:
    KEYS[1]      the map (partition-map.lua)

    ARGV[1]      from: the number of partitions the caller read
    ARGV[2]      to: the number it asks for (more than from)

  Output:
    { 'ok', epoch } the new epoch
    { 'stale', n } the map holds another number
    { 'busy', epoch } an earlier resize's handover is still under way
    { 'none' } the queue has no map (deleted meanwhile)
]]
local m = redis.call('HMGET', KEYS[1], 'n', 'epoch', 'sizes', 'hold')
if not m[1] then return { 'none' } end
if m[1] ~= ARGV[1] then return { 'stale', m[1] } end
if m[4] then return { 'busy', m[2] } end
local epoch = tonumber(m[2]) + 1
redis.call('HSET', KEYS[1], 'n', ARGV[2], 'epoch', epoch, 'sizes', (m[3] or m[1]) .. ',' .. ARGV[2], 'hold', '1')
return { 'ok', epoch }
