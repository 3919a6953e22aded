--[[
  Delayed jobs: K_DELAYED holds id -> due time, and meta nextDue the earliest one, which
  every lease call reads (at no extra command) to promote due jobs and to tell a blocked
  leaser how long it may wait. Jobs due at the same time become pending in the order they
  were delayed, whatever their ids (a sorted set orders equal scores by member): a due time
  that two or more delayed jobs share has a tie list, tieKey(due), holding its ids in that
  order, and K_TIES indexes those due times. A job alone at its due time has none. Needs
  redis/keys.lua, redis/calls.lua, redis/record.lua, events/events.lua,
  leases/wake.lua, adds/pending.lua.
]]

-- A due time as its tie list names it (a score comes back from Redis as text).
local function dueText(due) return string.format('%d', tonumber(due)) end

-- The due time an add asks for: 'd<ms>' after a delay (Redis clock: `clock()` is now), 'a<ms>'
-- at that time; nil for '' and 'l' (pending now).
local function dueTime(due, clock)
  local kind = string.sub(due, 1, 1)
  if kind == 'd' then return clock() + tonumber(string.sub(due, 2)) end
  if kind == 'a' then return tonumber(string.sub(due, 2)) end
  return nil
end

local function addDelayed(id, due)
  redis.call('ZADD', K_DELAYED, due, id)
  local d = dueText(due)
  -- alone at its due time: no list; the second job due then starts it, the others join it
  local same = redis.call('ZRANGEBYSCORE', K_DELAYED, d, d, 'LIMIT', 0, 2)
  if #same == 2 and redis.call('RPUSHX', tieKey(d), id) == 0 then
    redis.call('RPUSH', tieKey(d), same[1] == id and same[2] or same[1], id)
    redis.call('ZADD', K_TIES, d, d)
  end
  local cur = tonumber(redis.call('HGET', K_META, 'nextDue'))
  if not cur or due < cur then
    redis.call('HSET', K_META, 'nextDue', due)
    wakeNeeded = true -- blocked leasers must shorten their wait
  end
end

-- Takes `id` out of the delayed set other than by coming due (removed, promoted by hand, a
-- scheduler's job made ahead dropped), and out of its due time's tie list (O(position)
-- there). False when it was not delayed.
local function unDelay(id)
  local due = redis.call('ZSCORE', K_DELAYED, id)
  if not due then return false end
  redis.call('ZREM', K_DELAYED, id)
  local d = dueText(due)
  if redis.call('LREM', tieKey(d), 1, id) == 1 and redis.call('EXISTS', tieKey(d)) == 0 then redis.call('ZREM', K_TIES, d) end
  return true
end

-- Makes `ids`, just taken out of the delayed set, pending now (due, or promoted by hand:
-- promote-job.lua), in their priority or group; ids without a record are dropped. nextDue
-- is the caller's to refresh.
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
  pushPending(live, prios, groups)
end

-- The ids of `due` (id, score pairs of ZRANGEBYSCORE WITHSCORES) in the order they were
-- delayed: where `due` holds n ids at a due time with a tie list, the list's first n ids
-- instead, taken from it. One ZRANGEBYSCORE of K_TIES when no due time is shared.
local function inDelayOrder(due)
  local ids = {}
  local tied = redis.call('ZRANGEBYSCORE', K_TIES, '-inf', due[#due])
  if #tied == 0 then
    for i = 1, #due, 2 do ids[#ids + 1] = due[i] end
    return ids
  end
  local isTied = {}
  for _, d in ipairs(tied) do isTied[d] = true end
  local i = 1
  while i < #due do
    local score, n = due[i + 1], 1
    while due[i + 2 * n + 1] == score do n = n + 1 end
    local d = dueText(score)
    if isTied[d] then
      local taken = redis.call('LPOP', tieKey(d), n) or {}
      if redis.call('EXISTS', tieKey(d)) == 0 then redis.call('ZREM', K_TIES, d) end
      -- Only ids still delayed at d: a list out of step with the set (an older relq, without
      -- tie lists, promoted or removed its jobs during a rolling upgrade) must not make a job
      -- pending twice. Ids the list misses come due as plain ones once it is empty.
      local scores = readMany('ZMSCORE', K_DELAYED, taken)
      for k, id in ipairs(taken) do
        if scores[k] and dueText(scores[k]) == d then ids[#ids + 1] = id end
      end
    else
      for k = 0, n - 1 do ids[#ids + 1] = due[i + 2 * k] end
    end
    i = i + 2 * n
  end
  return ids
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

-- Moves up to `limit` due delayed jobs to pending, earliest due first and, within a due
-- time, in the order they were delayed; returns count and next due time.
local function promoteDue(now, limit)
  local due = redis.call('ZRANGEBYSCORE', K_DELAYED, '-inf', now, 'WITHSCORES', 'LIMIT', 0, limit)
  local ids = #due > 0 and inDelayOrder(due) or due
  if #ids > 0 then
    callMany('ZREM', K_DELAYED, ids)
    promoteIds(ids)
  end
  return #ids, refreshNextDue()
end
