--[[
  Stores a Queue object's settings (lib/core/settings/queue-settings.ts configure()), once per
  object. A new glimit reactivates groups parked at the old one; a new bound makes waiting
  producers check again.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      bound: most unfinished jobs
    ARGV[3]      stats: '1' counts produced and consumed totals
    ARGV[4]      glimit: most leased jobs per group
    ARGV[5]      rl: the queue's rate limit, '<max>:<durationMs>' (rate-limits/limiter.lua)
    ARGV[6]      grl: each group's rate limit, as rl
    ARGV[7]      gc: most leased jobs of the queue, all workers together
    For each: '' leaves the setting alone, '0' removes it.
    ARGV[8]      govr: group overrides, '' none, else JSON { group: { c?: concurrency, r?: rl } },
                 each written over the group's stored one (an empty object removes it)
    ARGV[9]      mx: minutes of metrics history kept (metrics-history/history.lua); '' leaves
                 it alone, '0' removes it

  Output:
    1, or 'deleted' (tombstone: nothing written)
]]
eventsArg = ARGV[1] == '1'
if isDeleted() then return 'deleted' end
local fields = { 'bound', 'stats', 'glimit', 'rl', 'grl', 'gc' }
local old = redis.call('HMGET', K_META, 'bound', 'stats', 'glimit', 'gc')
for i, f in ipairs(fields) do
  local v = ARGV[1 + i]
  if v == '0' then
    redis.call('HDEL', K_META, f)
  elseif v ~= '' then
    redis.call('HSET', K_META, f, v)
  end
end
if ARGV[9] == '0' then redis.call('HDEL', K_META, 'mx') elseif ARGV[9] ~= '' then redis.call('HSET', K_META, 'mx', ARGV[9]) end
redis.call('HSET', K_META, 'cfg', '1') -- produce.lua: settings are in place
if ARGV[4] ~= '' and (tonumber(old[3]) or 0) ~= tonumber(ARGV[4]) then
  -- a new group limit: groups parked at the old one may lease again
  glimitCache = tonumber(ARGV[4])
  for _, g in ipairs(redis.call('SMEMBERS', K_GROUPS)) do
    local lim = groupOverrides.limitOf(g)
    if lim == 0 or (tonumber(redis.call('HGET', K_GWORK, g)) or 0) < lim then activateGroup(g) end
  end
end
if ARGV[8] ~= '' then
  for g, o in pairs(cjson.decode(ARGV[8])) do groupOverrides.set(g, o.c, o.r) end
end
local gc = tonumber(ARGV[7])
if gc and (gc == 0 or gc > (tonumber(old[4]) or 0)) and (tonumber(old[4]) or 0) ~= gc then
  -- more room (or no limit): leasers blocked at the old limit look again
  if ungroupedPending() or redis.call('LLEN', K_GACTIVE) > 0 then wakeNeeded = true end
end
if ARGV[2] ~= '' and (tonumber(old[1]) or 0) ~= tonumber(ARGV[2]) then
  -- a new bound: waiters check again (waking them costs their place in line, so only then)
  local w = redis.call('ZCARD', K_WAITERS)
  if w > 0 then notifyWaiters(w) end
end
flushWake()
flushEvents()
return 1
