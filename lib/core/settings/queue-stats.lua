--[[
  A queue's counted totals (lib/core/settings/queue-settings.ts stats()), also of a deleted
  queue (tombstone): zeros.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

  Output:
    { pm, pb, cm, cb, enabled 0/1 }: produced and consumed messages and bytes
]]
local s = redis.call('HMGET', K_STATS, 'pm', 'pb', 'cm', 'cb')
local on = redis.call('HEXISTS', K_META, 'stats')
return { tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or 0, tonumber(s[4]) or 0, on }
