-- Exclusive producer / consumer roles (lib/core/queue/exclusive-role.ts). The role key holds the holder's
-- identity and expires unless the holder refreshes it, so a crashed holder's role is
-- recovered after its ttl. Releasing it wakes one process blocked waiting for the role.
-- ARGV: 1 op (acquire | refresh | release), 2 role (producer | consumer), 3 holder value, 4 ttl ms
-- Reply: acquire { 'ok' } | { 'held', holder, ms left } | { 'deleted' };
--        refresh 1 (still held) / 0 (lost); release 1 / 0.
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
