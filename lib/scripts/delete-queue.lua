-- Deletes a queue: every key (the declared ones, the derived ones of include/ext.lua, each
-- group's list), then leaves a tombstone (meta del=1 that expires after ARGV[2] ms) and
-- wake-up tokens with the same expiry, so that blocked consumers, blocked producers and
-- role waiters learn of it and fail with a clear error. Lease replay records (one per lease
-- request) are not listed anywhere; each expires after its lease length.
-- ARGV: 1 events(0/1), 2 tombstone ms. Reply: number of keys removed.
eventsArg = ARGV[1] == '1'
local ttl = tonumber(ARGV[2])
local removed = 0
local function unlink(keys)
  for i = 1, #keys, 1000 do
    removed = removed + redis.call('UNLINK', unpack(keys, i, math.min(i + 999, #keys)))
  end
end
local groupKeys = {}
for _, g in ipairs(redis.call('SMEMBERS', K_GROUPS)) do groupKeys[#groupKeys + 1] = groupKey(g) end
-- parked or drained groups may still have a list: gset and gwork name the rest
for _, g in ipairs(redis.call('SMEMBERS', K_GSET)) do groupKeys[#groupKeys + 1] = groupKey(g) end
for _, g in ipairs(redis.call('HKEYS', K_GWORK)) do groupKeys[#groupKeys + 1] = groupKey(g) end
unlink(groupKeys)
local waiters = redis.call('ZCARD', K_WAITERS)
local keys = {}
for i = 1, #KEYS do keys[i] = KEYS[i] end
for _, k in ipairs({ K_GACTIVE, K_GSET, K_GWORK, K_GROUPS, K_WAITERS, K_NOTFULL, K_STATS,
  roleKey('producer'), roleKey('consumer'), roleKey('producer') .. ':free', roleKey('consumer') .. ':free' }) do
  keys[#keys + 1] = k
end
unlink(keys)

redis.call('HSET', K_META, 'del', '1')
redis.call('PEXPIRE', K_META, ttl)
redis.call('RPUSH', K_WAKE, 'x')
redis.call('PEXPIRE', K_WAKE, ttl)
local t = {}
for i = 1, math.min(waiters, 1000) + 1 do t[i] = 'x' end
callMany('RPUSH', K_NOTFULL, t)
redis.call('PEXPIRE', K_NOTFULL, ttl)
for _, role in ipairs({ 'producer', 'consumer' }) do
  local k = roleKey(role) .. ':free'
  redis.call('RPUSH', k, 'x')
  redis.call('PEXPIRE', k, ttl)
end
emit({ type = 'deleted' })
flushEvents()
return removed
