--[[
  The books of the leases one call ended (settled or expired), applied once at its end by
  flushEnded(): each group's count of jobs leased now (K_GWORK) goes down and a group that
  has room again rejoins the rotation; slots freed in a bounded queue wake its blocked
  producers; the last unfinished job of a closed queue wakes a blocked consumer, which then
  sees the queue drained. A plain queue's leases (tokens without '*') need none of this and
  cost nothing here. Needs redis/keys.lua, leases/wake.lua, groups/groups.lua,
  backpressure/bound.lua, adds/pending.lua.
]]

-- A call's record of ended leases, filled by leaseEnded() and by the caller: ext (a lease of
-- an extended queue ended), freed (unfinished jobs that finished: completed or dead), and,
-- once a grouped lease ended, per group the leases that ended (count) in first-ended order
-- (order). Those two tables are made only then, and the record itself is one table reused
-- by every call (a call asks for it once), so that on the hot path (a plain queue's lease
-- and settle calls) it allocates nothing.
local endedRecord = {}
local function endedLeases()
  local r = endedRecord
  r.ext, r.freed, r.count, r.order = false, 0, nil, nil
  return r
end

-- A lease of `group` ('' = ungrouped, nil = plain queue) ended.
local function leaseEnded(ended, group)
  if group == nil then return end
  ended.ext = true
  if group ~= '' then
    local count = ended.count
    if not count then
      count = {}
      ended.count, ended.order = count, {}
    end
    if not count[group] then ended.order[#ended.order + 1] = group end
    count[group] = (count[group] or 0) + 1
  end
end

-- The groups' part of flushEnded: their ended leases give their slots back, and a group with
-- room and work rejoins the rotation. The settle-and-lease call (leases/lease.lua) runs it
-- before it leases, so that a group at its limit is served by the call that ended its lease
-- (not by a wake-up and a second call). Returns the groups that rejoined, nil when none did.
local function flushEndedGroups(ended)
  local order = ended.order
  if not order then return nil end
  ended.order = nil
  if glimitCache == nil or groupOverrides.on == nil then
    -- what groupOverrides.limitOf reads, in one command
    local m = redis.call('HMGET', K_META, 'glimit', 'govr')
    glimitCache, groupOverrides.on = tonumber(m[1]) or 0, m[2] and true or false
  end
  local rejoined
  for _, g in ipairs(order) do
    local busy = redis.call('HINCRBY', K_GWORK, g, -ended.count[g])
    if busy <= 0 then redis.call('HDEL', K_GWORK, g) end
    local lim = groupOverrides.limitOf(g)
    if (lim == 0 or busy < lim) and redis.call('LLEN', groupKey(g)) > 0 and activateGroup(g) then
      rejoined = rejoined or {}
      rejoined[#rejoined + 1] = g
    end
  end
  return rejoined
end

local function flushEnded(ended)
  if not ended.ext then return end
  local m = redis.call('HMGET', K_META, 'bound', 'closed', 'glimit', 'gc', 'govr')
  glimitCache, groupOverrides.on = tonumber(m[3]) or 0, m[5] and true or false
  flushEndedGroups(ended)
  if ended.freed > 0 then
    if (tonumber(m[1]) or 0) > 0 then notifyWaiters(ended.freed) end
    -- the last unfinished job of a closed queue: blocked consumers must see it drained
    if m[2] and unfinishedCount() == 0 then wakeNeeded = true end
  end
  -- Below the queue-wide concurrency again, after this call's own leases (leases/lease-jobs.lua
  -- dropped the tokens at the limit): a leaser is woken if work waits.
  if m[4] and not wakeNeeded and redis.call('ZCARD', K_WORKING) < tonumber(m[4])
      and (ungroupedPending() or redis.call('LLEN', K_GACTIVE) > 0) then
    wakeNeeded = true
  end
end
