-- Leases up to `count` jobs: priority > 0 first, then the FIFO list, then priority < 0.
-- Token of the i-th job is "<reqId>.<i>"; the deadline is now + the job's own leaseMs
-- (meta l) or the caller's. Returns the flat reply: id, token, deadline, record per job.
local function leaseJobs(now, reqKey, reqId, count, leaseMs, woken, promoteLimit)
  -- fields 3.. are read for include/ext.lua at no extra command: g, bound, closed, stats, del, glimit, u
  local flags = redis.call('HMGET', K_META, 'paused', 'nextDue', 'g', 'bound', 'closed', 'stats', 'del', 'glimit', 'u')
  local nextDue = tonumber(flags[2])
  if flags[1] then
    redis.call('DEL', K_WAKE)
    return {}, nextDue, 1
  end
  if nextDue and nextDue <= now then
    local _
    _, nextDue = promoteDue(now, promoteLimit)
  end
  if flags[3] or flags[4] or flags[5] or flags[6] or flags[7] then
    return leaseExt(now, reqKey, reqId, count, leaseMs, woken, flags, nextDue)
  end

  local taken, fromPrio = {}, {}
  local head = redis.call('ZRANGE', K_PRIO, 0, count - 1, 'WITHSCORES')
  local low = {}
  for i = 1, #head, 2 do
    if tonumber(head[i + 1]) < 0 then
      taken[#taken + 1] = head[i]
      fromPrio[#fromPrio + 1] = head[i]
    else
      low[#low + 1] = head[i]
    end
  end
  local need = count - #taken
  if need > 0 then
    local popped = redis.call('LPOP', K_PENDING, need)
    if popped then
      for _, id in ipairs(popped) do taken[#taken + 1] = id end
      need = count - #taken
    end
  end
  local i = 1
  while need > 0 and low[i] do
    taken[#taken + 1] = low[i]
    fromPrio[#fromPrio + 1] = low[i]
    need = need - 1
    i = i + 1
  end
  if #fromPrio > 0 then callMany('ZREM', K_PRIO, fromPrio) end
  if #taken == 0 then
    redis.call('DEL', K_WAKE) -- nothing leasable: any token left is stale
    return {}, nextDue, 0
  end

  local recs = hmgetMany(K_JOBS, taken)
  local reply, leases, working, leasedIds = {}, {}, {}, {}
  for j, id in ipairs(taken) do
    local rec = recs[j]
    if rec then -- a job removed while pending has no record: skip its stale id
      local token = reqId .. '.' .. j
      local deadline = now + (metaInt(rec, 'l') or leaseMs)
      leases[#leases + 1] = id
      leases[#leases + 1] = token
      working[#working + 1] = deadline
      working[#working + 1] = id
      leasedIds[#leasedIds + 1] = id
      reply[#reply + 1] = id
      reply[#reply + 1] = token
      reply[#reply + 1] = deadline
      reply[#reply + 1] = rec
      emit({ type = 'leased', id = id, attempt = (metaInt(rec, 'f') or 0) - (metaInt(rec, 'o') or 0) + 1 })
    end
  end
  if #leasedIds > 0 then
    callMany('HSET', K_LEASES, leases)
    callMany('ZADD', K_WORKING, working)
    -- Remembered so that a replay of this request (lost reply) returns these leases.
    redis.call('SET', reqKey, table.concat(leasedIds, '\n'), 'PX', leaseMs)
  end
  -- A woken leaser that leaves work behind wakes the next blocked one.
  if woken and #taken == count then
    if redis.call('LLEN', K_PENDING) > 0 or redis.call('ZCARD', K_PRIO) > 0 then wakeNeeded = true end
  end
  return reply, nextDue, 0
end

-- The leases a request already got, when the request is replayed.
local function replayLease(recorded, reqId)
  local ids = {}
  for id in string.gmatch(recorded, '[^\n]+') do ids[#ids + 1] = id end
  local reply = {}
  local tokens = hmgetMany(K_LEASES, ids)
  local recs = hmgetMany(K_JOBS, ids)
  for j, id in ipairs(ids) do
    local t = tokens[j]
    if t and recs[j] and string.sub(t, 1, #reqId + 1) == reqId .. '.' then
      reply[#reply + 1] = id
      reply[#reply + 1] = t
      reply[#reply + 1] = tonumber(redis.call('ZSCORE', K_WORKING, id))
      reply[#reply + 1] = recs[j]
    end
  end
  return reply
end
