--!include include/keys.lua
--!include include/common.lua
-- Adds jobs on the managed path (lib/core/queue-ext.ts): refuses a closed or deleted queue,
-- fences an exclusive producer, enforces the bound with blocked-producer waiters, routes
-- grouped jobs to their group, counts stats. Checks come first, then the writes.
-- ARGV: 1 events(0/1), 2 waiter id, 3 mode ('w' may wait | 't' try only), 4 keep (1: stay a
--   waiter after this add), 5 waiter ttl ms, 6 producer role value ('' not exclusive), 7 has
--   settings (1: this producer stores bound/stats/glimit; when they are gone from Redis, e.g. the
--   queue was deleted and is used again, the reply is 'configure'), 8 n,
--   then n items of 6 fields: id, custom(0/1), record, priority, due (as in add.lua), group ('' none)
-- Reply: { 'ok', { 1/0 per job (1 created, 0 duplicate) } } | { 'closed' } | { 'deleted' } | { 'configure' }
--   | { 'inuse', holder } | { 'full', free slots, waiters, bound } | { 'toobig', bound }
eventsOn = ARGV[1] == '1'
local now = nowMs()
local m = redis.call('HMGET', K_META, 'closed', 'bound', 'stats', 'del', 'glimit', 'cfg')
if m[4] then return { 'deleted' } end
if m[1] then return { 'closed' } end
if ARGV[7] == '1' and not m[6] then return { 'configure' } end
if ARGV[6] ~= '' then
  local holder = redis.call('GET', roleKey('producer'))
  if holder ~= ARGV[6] then return { 'inuse', holder or '' } end
end
glimitCache = tonumber(m[5]) or 0
local n = tonumber(ARGV[8])
local function item(i) return 9 + (i - 1) * 6 end

local bound = tonumber(m[2]) or 0
local waiter, ttl = ARGV[2], tonumber(ARGV[5])
local free = 0
if bound > 0 then
  local need = 0
  for i = 1, n do
    local b = item(i)
    if redis.call('HEXISTS', K_JOBS, ARGV[b]) == 0 then -- an existing id (a replay, a duplicate) needs no slot
      local until_ = ARGV[b + 1] == '1' and redis.call('ZSCORE', K_DEDUP, ARGV[b])
      if not (until_ and tonumber(until_) > now) then need = need + 1 end
    end
  end
  if need > bound then return { 'toobig', bound } end
  local waiting = redis.call('ZCARD', K_WAITERS)
  local registered = false
  if waiting > 0 then
    -- crashed waiters are forgotten
    waiting = waiting - redis.call('ZREMRANGEBYSCORE', K_WAITERS, '-inf', now)
    registered = waiter ~= '' and redis.call('ZSCORE', K_WAITERS, waiter) ~= false
  end
  free = bound - unfinishedCount()
  -- While producers wait, a newcomer queues behind them even if a slot is free.
  if need > free or (waiting > 0 and not registered) then
    if ARGV[3] == 'w' and waiter ~= '' then
      redis.call('ZADD', K_WAITERS, now + ttl, waiter)
      if not registered then
        waiting = waiting + 1
        if free > 0 then notifyWaiters(free) end -- free slots: the waiters ahead must use them
      end
    end
    return { 'full', math.max(free, 0), waiting, bound }
  end
  free = free - need
  if registered then
    if ARGV[4] == '1' then
      redis.call('ZADD', K_WAITERS, now + ttl, waiter)
    else
      redis.call('ZREM', K_WAITERS, waiter)
      waiting = waiting - 1
    end
  end
  if waiting > 0 and free > 0 then
    notifyWaiters(free) -- room left: the next waiter may take it
  elseif waiting == 0 and registered then
    redis.call('DEL', K_NOTFULL) -- the last waiter left: its unused tokens go
  end
end

local out, plainIds, plainPrios, groupIds, groupOrder = {}, {}, {}, {}, {}
local created, bytes = 0, 0
for i = 1, n do
  local b = item(i)
  local id, custom, rec, prio, due, group = ARGV[b], ARGV[b + 1] == '1', ARGV[b + 2], tonumber(ARGV[b + 3]), ARGV[b + 4], ARGV[b + 5]
  local fresh = true
  if custom then
    local until_ = redis.call('ZSCORE', K_DEDUP, id)
    if until_ and tonumber(until_) > now then fresh = false end
  end
  if fresh and redis.call('HSETNX', K_JOBS, id, rec) == 0 then
    -- as in add.lua: an existing generated id is this request replayed
    out[i] = custom and 0 or 1
  elseif fresh then
    out[i] = 1
    created = created + 1
    bytes = bytes + #rec - (string.find(rec, '\n', 1, true) or #rec)
    if due == '' then
      if group ~= '' then
        if not groupIds[group] then
          groupIds[group] = {}
          groupOrder[#groupOrder + 1] = group
        end
        local g = groupIds[group]
        g[#g + 1] = id
      else
        plainIds[#plainIds + 1] = id
        plainPrios[#plainPrios + 1] = prio
      end
    else
      local at = tonumber(string.sub(due, 2))
      if string.sub(due, 1, 1) == 'd' then at = now + at end
      addDelayed(id, at)
    end
    emit({ type = 'added', id = id })
  else
    out[i] = 0
  end
end
if #plainIds > 0 then pushPending(plainIds, plainPrios) end
for _, g in ipairs(groupOrder) do pushGroup(g, groupIds[g]) end
if m[3] and created > 0 then
  redis.call('HINCRBY', K_STATS, 'pm', created)
  redis.call('HINCRBY', K_STATS, 'pb', bytes)
end
flushWake()
flushEvents()
return { 'ok', out }
