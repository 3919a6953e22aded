--[[
  Delayed jobs: K_DELAYED holds id -> due time, and meta nextDue the earliest one, which
  every lease call reads (at no extra command) to promote due jobs and to tell a blocked
  leaser how long it may wait. Needs include/keys.lua, include/calls.lua,
  include/record.lua, include/events.lua, include/wake.lua, include/pending.lua.
]]

local function addDelayed(id, due)
  redis.call('ZADD', K_DELAYED, due, id)
  local cur = tonumber(redis.call('HGET', K_META, 'nextDue'))
  if not cur or due < cur then
    redis.call('HSET', K_META, 'nextDue', due)
    wakeNeeded = true -- blocked leasers must shorten their wait
  end
end

-- Makes the delayed `ids` pending now (due, or promoted by hand: promote-job.lua), in their
-- priority or group; ids without a record are dropped. nextDue is the caller's to refresh.
local function promoteIds(ids)
  local recs = hmgetMany(K_JOBS, ids)
  local live, prios, groups = {}, {}, {}
  for i, id in ipairs(ids) do
    if recs[i] then
      live[#live + 1] = id
      prios[#prios + 1] = metaInt(recs[i], 'p') or 0
      groups[#groups + 1] = metaGroup(recs[i]) or false
      emit({ type = 'promoted', id = id })
    end
  end
  callMany('ZREM', K_DELAYED, ids)
  pushPending(live, prios, groups)
end

-- meta nextDue from the delayed set after jobs left it; returns it (nil: none delayed).
local function refreshNextDue()
  local nxt = redis.call('ZRANGE', K_DELAYED, 0, 0, 'WITHSCORES')
  if nxt[2] then
    redis.call('HSET', K_META, 'nextDue', nxt[2])
    return tonumber(nxt[2])
  end
  redis.call('HDEL', K_META, 'nextDue')
  return nil
end

-- Moves up to `limit` due delayed jobs to pending; returns count and next due time.
local function promoteDue(now, limit)
  local due = redis.call('ZRANGEBYSCORE', K_DELAYED, '-inf', now, 'LIMIT', 0, limit)
  if #due > 0 then promoteIds(due) end
  return #due, refreshNextDue()
end
