--[[
  Takes an exclusive producer / consumer role (lib/core/roles/exclusive-role.ts). The role key
  holds the holder's identity and expires unless the holder refreshes it (refresh-role.lua),
  so a crashed holder's role is recovered after its ttl.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      role: 'producer' | 'consumer'
    ARGV[2]      holder: this process's identity
    ARGV[3]      ttlMs: of the role (ms)

  Output:
    { 'ok' } (taken, or held by this holder already: ttl renewed)
    | { 'held', holder, ms left (PTTL) } | { 'deleted' } (tombstone)
]]
local key, value, ttl = roleKey(ARGV[1]), ARGV[2], tonumber(ARGV[3])
if isDeleted() then return { 'deleted' } end
if redis.call('SET', key, value, 'NX', 'PX', ttl) then return { 'ok' } end
local holder = redis.call('GET', key)
if holder == value then
  redis.call('PEXPIRE', key, ttl)
  return { 'ok' }
end
return { 'held', holder or '', redis.call('PTTL', key) }
