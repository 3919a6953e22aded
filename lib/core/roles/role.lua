--[[
  Exclusive producer / consumer roles (lib/core/roles/exclusive-role.ts). The role key holds
  the holder's identity and expires unless the holder refreshes it, so a crashed holder's
  role is recovered after its ttl. Releasing it wakes one process blocked waiting for the
  role (a token in '<role key>:free').

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      op: 'acquire' | 'refresh' | 'release'
    ARGV[2]      role: 'producer' | 'consumer'
    ARGV[3]      holder value (this process's identity)
    ARGV[4]      ttl (ms): of the role, and of the release token

  Output:
    acquire  { 'ok' } (taken, or held by this value already: ttl renewed)
             | { 'held', holder, ms left (PTTL) } | { 'deleted' }
    refresh  1 still held (ttl renewed) / 0 lost
    release  1 released / 0 not held by this value
    An unknown op is an error reply.
]]
local op, key, value, ttl = ARGV[1], roleKey(ARGV[2]), ARGV[3], tonumber(ARGV[4])
local freeKey = key .. ':free'
if op == 'acquire' then
  if redis.call('HEXISTS', K_META, 'del') == 1 then return { 'deleted' } end
  if redis.call('SET', key, value, 'NX', 'PX', ttl) then return { 'ok' } end
  local holder = redis.call('GET', key)
  if holder == value then
    redis.call('PEXPIRE', key, ttl)
    return { 'ok' }
  end
  return { 'held', holder or '', redis.call('PTTL', key) }
elseif op == 'refresh' then
  if redis.call('GET', key) == value then
    redis.call('PEXPIRE', key, ttl)
    return 1
  end
  return 0
elseif op == 'release' then
  if redis.call('GET', key) == value then
    redis.call('DEL', key)
    redis.call('DEL', freeKey)
    redis.call('RPUSH', freeKey, '1')
    redis.call('PEXPIRE', freeKey, ttl)
    return 1
  end
  return 0
end
return redis.error_reply('relq: unknown role op ' .. tostring(op))
