-- Bounded queues, fair groups, queue lifecycle (closed / deleted) and stats.
-- Included by common.lua (after wakeNeeded, before pushPending); leasing from groups is in
-- lease-jobs.lua, adding to them in add-jobs.lua. See docs/bounded-fair-batch.md.
--
-- These keys are derived from the queue's hash tag instead of being passed in KEYS (per-group
-- lists cannot be known before the script picks a group). They share the tag, so they live in
-- the queue's Cluster slot like every declared key. lib/core/redis/keys.ts (DerivedKeys) lists the same names.
local K_TAG      -- '<tag>' (from K_JOBS = '<tag>:jobs')
local K_GACTIVE  -- list  rotation: groups that may lease now, '' = ungrouped jobs
local K_GSET     -- set   the group members of gactive (never '')
local K_GWORK    -- hash  group -> its jobs leased now
local K_GROUPS   -- set   groups whose pending list is not empty
local K_WAITERS  -- zset  blocked producer id -> registration expiry (ms)
local K_NOTFULL  -- list  wake-up tokens for blocked producers (BLPOP)
local K_STATS    -- hash  pm, pb produced messages/bytes; cm, cb consumed
local function groupKey(g) return K_TAG .. ':g:' .. g end
local function roleKey(role) return K_TAG .. ':role:' .. role end
-- meta fields used here: g (rotation may be non-empty), u ('' is in the rotation), gp (grouped
-- jobs pending), glimit, bound, closed, stats, del (tombstone of a deleted queue)

-- per call (reset by begin()):
local glimitCache  -- per-group concurrency limit (0 none), read once per call
local gFlagSet

local function groupLimit()
  if glimitCache == nil then glimitCache = tonumber(redis.call('HGET', K_META, 'glimit')) or 0 end
  return glimitCache
end

-- The group of a record, or nil. A quote inside a JSON string is always escaped, so the
-- pattern only matches a top-level key (see metaInt).
local function metaGroup(rec)
  local metaJson = splitRecord(rec)
  if string.find(metaJson, '[{,]"g":"') then
    local ok, meta = pcall(cjson.decode, metaJson)
    if ok and type(meta) == 'table' and type(meta.g) == 'string' then return meta.g end
  end
  return nil
end

-- Lease tokens of extended queues are '<reqId>.<j>*<group>' ('' for ungrouped); plain ones
-- have no '*'. Returns the group part, or nil for a plain token.
local function tokenGroup(token)
  return string.match(token, '^[^.]*%.%d+[~%d,]*%*(.*)$')
end

-- A call's record of the leases it ended (settled or expired), filled by leaseEnded() and by
-- the caller, applied by flushEnded(): ext (a lease of an extended queue ended), freed
-- (unfinished jobs that finished: completed or dead), and per group the leases that ended
-- (count), in first-ended order (order).
local function endedLeases()
  return { ext = false, freed = 0, order = {}, count = {} }
end

-- A lease of `group` ('' = ungrouped, nil = plain queue) ended.
local function leaseEnded(ended, group)
  if group == nil then return end
  ended.ext = true
  if group ~= '' then
    local count = ended.count
    if not count[group] then ended.order[#ended.order + 1] = group end
    count[group] = (count[group] or 0) + 1
  end
end

local function activateGroup(g)
  if redis.call('SADD', K_GSET, g) == 1 then
    redis.call('RPUSH', K_GACTIVE, g)
    if not gFlagSet then
      redis.call('HSET', K_META, 'g', '1')
      gFlagSet = true
    end
    wakeNeeded = true
  end
end

-- Makes ids of group g leasable (FIFO within the group).
local function pushGroup(g, ids)
  local len = callMany('RPUSH', groupKey(g), ids)
  redis.call('HINCRBY', K_META, 'gp', #ids)
  if len == #ids then redis.call('SADD', K_GROUPS, g) end
  local lim = groupLimit()
  if lim == 0 or (tonumber(redis.call('HGET', K_GWORK, g)) or 0) < lim then activateGroup(g) end
end

-- Jobs that count against the bound: pending + working + delayed. Every record is one of
-- those, completed (in done) or dead.
local function unfinishedCount()
  return redis.call('HLEN', K_JOBS) - redis.call('ZCARD', K_DONE) - redis.call('ZCARD', K_DEAD)
end

-- One token per freed slot, at most one per registered waiter.
local function notifyWaiters(k)
  local w = redis.call('ZCARD', K_WAITERS)
  if w == 0 then return end
  local add = math.min(k, w - redis.call('LLEN', K_NOTFULL), 1000)
  if add > 0 then
    local t = {}
    for i = 1, add do t[i] = '1' end
    callMany('RPUSH', K_NOTFULL, t)
  end
end

-- Applies the ended leases, before flushWake: group counts, freed slots, closed and drained.
-- Costs nothing unless a lease of an extended queue ended.
local function flushEnded(ended)
  if not ended.ext then return end
  local m = redis.call('HMGET', K_META, 'bound', 'closed', 'glimit')
  glimitCache = tonumber(m[3]) or 0
  for _, g in ipairs(ended.order) do
    local busy = redis.call('HINCRBY', K_GWORK, g, -ended.count[g])
    if busy <= 0 then redis.call('HDEL', K_GWORK, g) end
    if (glimitCache == 0 or busy < glimitCache) and redis.call('LLEN', groupKey(g)) > 0 then activateGroup(g) end
  end
  if ended.freed > 0 then
    if (tonumber(m[1]) or 0) > 0 then notifyWaiters(ended.freed) end
    -- the last unfinished job of a closed queue: blocked consumers must see it drained
    if m[2] and unfinishedCount() == 0 then wakeNeeded = true end
  end
end
