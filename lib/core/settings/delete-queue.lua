--[[
  Deletes a queue (lib/core/settings/queue-settings.ts deleteQueue()): every key (the queue
  keys, the derived ones of redis/keys.lua, each group's list, each job's log list, each
  shared due time's tie list, the role keys, the minutes of a metrics history), once the
  parents in other queues that its jobs still held learned that those children were removed
  (flows/flows.lua flowJobsGone), then leaves a tombstone (meta del=1) and wake-up tokens
  ('x') with the same expiry, so that blocked consumers, blocked producers and role waiters
  learn of it and fail with a clear error. Lease replay records (one per lease request) are not listed anywhere; each expires
  on its own (redis/replay.lua).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      tombstoneMs: how long the tombstone and the tokens stay (ms)

  Output:
    the number of keys removed

  Events:
    deleted
]]
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
for _, g in ipairs(redis.call('ZRANGE', K_GLIMITED, 0, -1)) do groupKeys[#groupKeys + 1] = groupKey(g) end
-- each group's rate-limit window (they also expire by themselves)
local n = #groupKeys
for i = 1, n do groupKeys[n + i] = glimKey(string.sub(groupKeys[i], #K_TAG + 4)) end
unlink(groupKeys)
local logKeys = {}
for _, id in ipairs(redis.call('HKEYS', K_LOGGED)) do logKeys[#logKeys + 1] = logKey(id) end
unlink(logKeys)
-- children that still hold a parent in another queue: it learns they were removed (flows/flows.lua)
local held = {}
for _, f in ipairs(redis.call('HKEYS', K_FLOWS)) do
  if string.sub(f, 1, 1) == '\n' then held[#held + 1] = string.sub(f, 2) end
end
flowJobsGone(held)
local flowKeys = { K_FLOWS, K_FLOWWAIT, runningParents.key() } -- each parent's children and their results (flows/flows.lua)
for _, id in ipairs(redis.call('HKEYS', K_FLOWS)) do
  flowKeys[#flowKeys + 1] = depsKey(id)
  flowKeys[#flowKeys + 1] = kresKey(id)
  flowKeys[#flowKeys + 1] = kfailKey(id)
  flowKeys[#flowKeys + 1] = kidsKey(id)
end
unlink(flowKeys)
local tieKeys = { K_TIES } -- the tie lists of shared due times (adds/delayed.lua)
for _, d in ipairs(redis.call('ZRANGE', K_TIES, 0, -1)) do tieKeys[#tieKeys + 1] = tieKey(d) end
unlink(tieKeys)
-- the minutes of a metrics history (metrics-history/history.lua); after it was turned off, they expire
unlink(metricsHistory.keys(tonumber(redis.call('HGET', K_META, 'mx')), nowMs()))
local waiters = redis.call('ZCARD', K_WAITERS)
local keys = {}
for i = 1, #KEYS do keys[i] = KEYS[i] end
for _, k in ipairs({ K_GACTIVE, K_GSET, K_GWORK, K_GROUPS, K_WAITERS, K_NOTFULL, K_STATS, K_PROGRESS, K_LOGGED, K_LIMITER, K_GLIMITED,
  K_SCHEDS, K_SCHED_STATE, K_SCHED_NEXT, K_DEADEXP, dedupKey('ids'), dedupKey('ttl'), dedupKey('next'), K_TAG .. ':cancelled', K_TAG .. ':cancelwhy', K_TAG .. ':govr',
  roleKey('producer'), roleKey('consumer'), roleKey('producer') .. ':free', roleKey('consumer') .. ':free', workerList.keys() }) do -- last: both its keys
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
