--[[
  Keeps an exclusive role (lib/core/roles/exclusive-role.ts, every ttl/3 while held).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      role: 'producer' | 'consumer'
    ARGV[2]      holder: this process's identity
    ARGV[3]      ttlMs: of the role (ms)

  Output:
    1 still held (ttl renewed) / 0 lost
]]
local key = roleKey(ARGV[1])
if redis.call('GET', key) == ARGV[2] then
  redis.call('PEXPIRE', key, tonumber(ARGV[3]))
  return 1
end
return 0
