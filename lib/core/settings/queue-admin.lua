--[[
  Queue-level settings and lifecycle (lib/core/settings/queue-settings.ts, backpressure.ts),
  one op per call.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      op, and its arguments from ARGV[3]:
      configure  3 bound, 4 stats ('1' on), 5 glimit, 6 rl and 7 grl (rate limits,
                 '<max>:<durationMs>', rate-limits/limiter.lua): '' leaves a setting alone, '0'
                 removes it.
                 A new glimit reactivates groups parked at the old one; a new bound makes
                 waiting producers check again.
      close      closed for adds; wakes blocked consumers and producers
      reopen     open for adds again
      state      the settings and the live (unexpired) waiters
      stats      the counted totals
      leave      3 waiter id: a blocked producer gives up
      renew      3 waiter id, 4 ttl ms: a blocked producer is still there. Forgets expired
                 waiters and, if that frees the way, wakes the next one.

  Output:
    configure  1
    close      1, or 0 when it was closed already
    reopen     1, or 0 when it was open
    state      { closed 0/1, bound (0 none), glimit (0 none), stats 0/1, waiters, rl, grl ('' none) }
    stats      { pm, pb, cm, cb, enabled 0/1 }: produced and consumed messages and bytes
    leave      1
    renew      1
    On a deleted queue (tombstone) every op but stats, leave and renew answers the string
    'deleted'. An unknown op is an error reply.

  Events:
    closed, reopened
]]
eventsArg = ARGV[1] == '1'
local op = ARGV[2]
if op == 'stats' then
  local s = redis.call('HMGET', K_STATS, 'pm', 'pb', 'cm', 'cb')
  local on = redis.call('HEXISTS', K_META, 'stats')
  return { tonumber(s[1]) or 0, tonumber(s[2]) or 0, tonumber(s[3]) or 0, tonumber(s[4]) or 0, on }
end
if op == 'renew' then
  local now = nowMs()
  redis.call('ZADD', K_WAITERS, now + tonumber(ARGV[4]), ARGV[3])
  if redis.call('ZREMRANGEBYSCORE', K_WAITERS, '-inf', now) > 0 then
    -- a crashed waiter may have been ahead in line with slots free: wake the next one
    local bound = tonumber(redis.call('HGET', K_META, 'bound')) or 0
    if bound > 0 then
      local free = bound - unfinishedCount()
      if free > 0 then notifyWaiters(free) end
    end
  end
  return 1
end
if op == 'leave' then
  redis.call('ZREM', K_WAITERS, ARGV[3])
  if redis.call('ZCARD', K_WAITERS) == 0 then redis.call('DEL', K_NOTFULL) end
  return 1
end
if redis.call('HEXISTS', K_META, 'del') == 1 then return 'deleted' end

local function wakeAll()
  -- Blocked consumers: one token; each consumer that sees the queue closed and drained
  -- wakes the next (leases/lease-jobs.lua). Blocked producers: one token per waiter.
  wakeNeeded = true
  local w = redis.call('ZCARD', K_WAITERS)
  if w > 0 then
    local t = {}
    for i = 1, math.min(w, 1000) do t[i] = '1' end
    callMany('RPUSH', K_NOTFULL, t)
  end
end

local result
if op == 'configure' then
  local fields = { 'bound', 'stats', 'glimit', 'rl', 'grl' }
  local old = redis.call('HMGET', K_META, 'bound', 'stats', 'glimit')
  for i, f in ipairs(fields) do
    local v = ARGV[2 + i]
    if v == '0' then
      redis.call('HDEL', K_META, f)
    elseif v ~= '' then
      redis.call('HSET', K_META, f, v)
    end
  end
  redis.call('HSET', K_META, 'cfg', '1') -- produce.lua: settings are in place
  if ARGV[5] ~= '' and (tonumber(old[3]) or 0) ~= tonumber(ARGV[5]) then
    -- a new group limit: groups parked at the old one may lease again
    glimitCache = tonumber(ARGV[5])
    for _, g in ipairs(redis.call('SMEMBERS', K_GROUPS)) do
      if glimitCache == 0 or (tonumber(redis.call('HGET', K_GWORK, g)) or 0) < glimitCache then activateGroup(g) end
    end
  end
  if ARGV[3] ~= '' and (tonumber(old[1]) or 0) ~= tonumber(ARGV[3]) then
    -- a new bound: waiters check again (waking them costs their place in line, so only then)
    local w = redis.call('ZCARD', K_WAITERS)
    if w > 0 then notifyWaiters(w) end
  end
  result = 1
elseif op == 'close' then
  result = redis.call('HSETNX', K_META, 'closed', '1')
  if result == 1 then
    emit({ type = 'closed' })
    wakeAll()
  end
elseif op == 'reopen' then
  result = redis.call('HDEL', K_META, 'closed')
  if result == 1 then emit({ type = 'reopened' }) end
elseif op == 'state' then
  local m = redis.call('HMGET', K_META, 'closed', 'bound', 'glimit', 'stats', 'rl', 'grl')
  local live = redis.call('ZCOUNT', K_WAITERS, '(' .. nowMs(), '+inf') -- expired ones are crashed waiters
  return { m[1] and 1 or 0, tonumber(m[2]) or 0, tonumber(m[3]) or 0, m[4] and 1 or 0, live, m[5] or '', m[6] or '' }
else
  return redis.error_reply('relq: unknown queue-admin op ' .. tostring(op))
end
flushWake()
flushEvents()
return result
