--[[
  One page of the dead letters, oldest first (lib/core/management/inspector.ts listDead()).
  Read-only. Cost: O(log D + offset + limit) for D dead letters.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      offset: into the dead letters, oldest first
    ARGV[2]      limit: how many from the offset

  Output:
    { id, record ('' when gone), time of death (ms, a bulk string), ... } oldest first
]]
local offset = tonumber(ARGV[1])
local ids = redis.call('ZRANGE', K_DEAD, offset, offset + tonumber(ARGV[2]) - 1)
if #ids == 0 then return {} end
local recs = hmgetMany(K_JOBS, ids)
local out = {}
for i, id in ipairs(ids) do
  out[#out + 1] = id
  out[#out + 1] = recs[i] or ''
  out[#out + 1] = redis.call('ZSCORE', K_DEAD, id)
end
return out
