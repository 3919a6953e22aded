--[[
  Gives an exclusive role up (lib/core/roles/exclusive-role.ts) and wakes one process blocked
  waiting for it (a token in '<role key>:free').

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      role: 'producer' | 'consumer'
    ARGV[2]      holder: this process's identity
    ARGV[3]      ttlMs: of the release token (ms)

  Output:
    1 released / 0 not held by this holder
]]
local key = roleKey(ARGV[1])
if redis.call('GET', key) ~= ARGV[2] then return 0 end
local freeKey = key .. ':free'
redis.call('DEL', key)
redis.call('DEL', freeKey)
redis.call('RPUSH', freeKey, '1')
redis.call('PEXPIRE', freeKey, tonumber(ARGV[3]))
return 1
