--[[
  Leasing, for lease.lua. A plain queue takes ungrouped jobs (adds/pending.lua). An
  extended queue (groups, a bound, stats, closed or deleted; docs/bounded-fair-batch.md)
  also rotates over its groups and keeps its books: its lease tokens name the group, so that
  the end of the lease finds it (settles/ended.lua). Needs redis/keys.lua,
  redis/calls.lua, redis/record.lua, redis/lease-token.lua, events/events.lua, leases/wake.lua,
  groups/groups.lua, backpressure/bound.lua, adds/pending.lua, adds/delayed.lua.
]]

-- The file's own helpers are local to the block below (not indented), so that they take no
-- place among the prelude's top-level locals: Lua allows a function 200.
local leaseJobs
do
-- Round robin over the rotation: one job per turn. Every turn takes a job or removes a
-- member, so this ends within count + #rotation turns.
local function takeFair(count, flags, taken, groups, now)
  local grl = flags[11] -- the groups' rate limit (rate-limits/limiter.lua)
  if grl then limitedUntil = earliest(limitedUntil, reopenLimitedGroups(now)) end
  -- (none pending: known for the rest of the call, which adds none)
  local noUngrouped = false
  if not flags[9] then
    if ungroupedPending() then
      redis.call('RPUSH', K_GACTIVE, '')
      redis.call('HSET', K_META, 'u', '1')
      flags[9] = '1' -- a second call (after ghosts were dropped) must not add it again
    else
      noUngrouped = true
    end
  end
  local lim = groupLimit()
  groupOverrides.any() -- sets groupOverrides.on for the loop
  local gpTaken = 0
  while #taken < count do
    local g = redis.call('LMOVE', K_GACTIVE, K_GACTIVE, 'LEFT', 'RIGHT')
    if not g then
      -- groups waiting for their rate-limit window keep the queue on this path
      if grl and redis.call('ZCARD', K_GLIMITED) > 0 then redis.call('HDEL', K_META, 'u') else redis.call('HDEL', K_META, 'g', 'u') end
      if not noUngrouped then
        for _, id in ipairs(takeUngrouped(count - #taken)) do
          taken[#taken + 1] = id
          groups[#groups + 1] = ''
        end
      end
      break
    end
    if g == '' then
      local id = takeUngrouped(1)[1]
      if id then
        taken[#taken + 1] = id
        groups[#groups + 1] = ''
      else
        redis.call('RPOP', K_GACTIVE) -- the member just rotated to the tail
        redis.call('HDEL', K_META, 'u')
      end
    else
      local gk = groupKey(g)
      local glim, gr = lim, grl
      if groupOverrides.on then glim, gr = groupOverrides.limitOf(g), groupOverrides.rateOf(g, grl) end
      local busy = glim > 0 and (tonumber(redis.call('HGET', K_GWORK, g)) or 0) or 0
      local id, spentAt
      local open = not gr or allowance(glimKey(g), gr, 1, now) > 0
      if open and (glim == 0 or busy < glim) then id = redis.call('LPOP', gk) end
      if id then
        taken[#taken + 1] = id
        groups[#groups + 1] = g
        gpTaken = gpTaken + 1
        busy = redis.call('HINCRBY', K_GWORK, g, 1)
        if gr then spentAt = spend(glimKey(g), gr, 1, now) end
      end
      local left = redis.call('LLEN', gk)
      if left == 0 or (glim > 0 and busy >= glim) or not open or spentAt then
        redis.call('RPOP', K_GACTIVE)
        redis.call('SREM', K_GSET, g)
        if left == 0 then
          redis.call('SREM', K_GROUPS, g)
        elseif not open or spentAt then
          -- out of the rotation until its window ends
          local at = spentAt or select(2, allowance(glimKey(g), gr, 1, now))
          parkLimitedGroup(g, at)
          limitedUntil = earliest(limitedUntil, at)
        end
      end
    end
  end
  if gpTaken > 0 then redis.call('HINCRBY', K_META, 'gp', -gpTaken) end
end

-- Leases the taken ids whose records `recs` holds, each with a fresh token
-- (redis/lease-token.lua) that carries the job's retention when it is not the built-in one
-- (`defaults`, parseDefaults), has a count or the job is in a flow, and its group when `groups` is given
-- (an extended queue). Deadline: now + the job's own leaseMs (meta l) or the caller's.
-- `keepMetrics`: the queue's metrics.keepMinutes (meta mx), which its tokens carry to settling
-- (metrics-history/history.lua), nil when it keeps no metrics history.
-- Appends id, token, deadline and record per job to `reply`; returns the leased ids and,
-- with `groups`, their data bytes.
local function grantLeases(reply, now, reqId, taken, recs, leaseMs, groups, defaults, keepMetrics)
  local leases, first = {}, #reply
  local bytes = 0
  local start = '@' .. string.format('%d', now) -- each token's lease start (redis/lease-token.lua)
  if keepMetrics then start = start .. '!' .. keepMetrics end
  for j, id in ipairs(taken) do
    local rec = recs[j]
    local meta = metaPart(rec)
    local ownLeaseMs, keep, unique, window, flow, most = leasePolicy(meta)
    local keepText, dedupText
    if keep or unique or flow or most then
      keepText, dedupText = keep or defaults.keepText, unique and (window or defaults.dedupText) or '0'
    end
    -- a flow's job: its ack tells its parent (flows/flows.lua); a count: its ack trims the
    -- completed jobs (settles/retention.lua)
    local token = leaseToken(reqId, j, start, keepText, dedupText, flow, groups and groups[j], most)
    if groups then bytes = bytes + dataBytes(rec) end
    local deadline = now + (tonumber(ownLeaseMs) or leaseMs)
    leases[#leases + 1] = id
    leases[#leases + 1] = token
    reply[#reply + 1] = id
    reply[#reply + 1] = token
    reply[#reply + 1] = deadline
    reply[#reply + 1] = rec
    if eventsOn() then
      emit({ type = 'leased', id = id, attempt = (metaInt(meta, 'f') or 0) - (metaInt(meta, 'o') or 0) + 1 })
    end
  end
  if #taken > 0 then
    callMany('HSET', K_LEASES, leases)
    -- Backwards: ids mostly ascend, and a small zset (listpack) inserts by scanning from its
    -- head, so descending members each stop at once (a 100-job ZADD costs a third).
    local working = {}
    for r = #reply - 3, first + 1, -4 do
      working[#working + 1] = int(reply[r + 2]) -- the deadline
      working[#working + 1] = reply[r]
    end
    callMany('ZADD', K_WORKING, working)
  end
  return taken, bytes
end

-- Most ids without a record one lease call drops; past it, it wakes another leaser.
local MAX_GHOSTS = 1000

-- Keeps the taken ids that still have a record. An id whose record is gone (evicted, or
-- lost some other way) is a ghost: it is dropped and counted (meta 'ghosts'), and the caller
-- takes more, so that valid jobs behind thousands of ghosts are still leased at once.
local function dropGhosts(taken, groups, recs, live, liveGroups, liveRecs)
  local ghosts = 0
  for j, id in ipairs(taken) do
    if recs[j] then
      live[#live + 1] = id
      liveRecs[#liveRecs + 1] = recs[j]
      if groups then liveGroups[#liveGroups + 1] = groups[j] end
    else
      ghosts = ghosts + 1
      if groups and groups[j] ~= '' then
        redis.call('HINCRBY', K_GWORK, groups[j], -1) -- its group counted it as leased
      end
    end
  end
  return ghosts
end

-- Takes up to n ids to lease, and for an extended queue their groups ('' ungrouped).
local function take(n, ext, flags, now)
  if not ext then return takeUngrouped(n), nil end
  local taken, groups = {}, {}
  if flags[3] then
    takeFair(n, flags, taken, groups, now)
  else
    taken = takeUngrouped(n)
    for j = 1, #taken do groups[j] = '' end
  end
  return taken, groups
end

-- Whether a record of `recs` (HMGET of n ids) is missing.
local function anyGhost(recs, n)
  for j = 1, n do
    if not recs[j] then return true end
  end
  return false
end

-- Leases up to `count` jobs, appending them to `reply` (see grantLeases). Returns the next
-- due time, a state (0, 1 paused, 2 closed and drained, 3 deleted), the ghosts dropped and
-- the leased ids.
function leaseJobs(reply, now, reqId, count, leaseMs, woken, promoteLimit, defaults)
  -- fields 3.. are read for extended queues at no extra command: g, bound, closed, stats, del, glimit, u;
  -- rl and grl for rate-limited ones (rate-limits/limiter.lua); notes (progress/progress.lua)
  -- gc: the queue-wide concurrency (below); mx: a queue that keeps a metrics history
  -- (metrics-history/history.lua); np: no prioritized job (adds/pending.lua)
  local flags = redis.call('HMGET', K_META, 'paused', 'nextDue', 'g', 'bound', 'closed', 'stats', 'del', 'glimit', 'u', 'rl', 'grl', 'notes', 'gc', 'mx', 'np')
  notesFlag = flags[12] and true or false -- progress/progress.lua
  noPrio = flags[15] and true or false    -- adds/pending.lua (before promoteDue, which may add to K_PRIO)
  local nextDue = tonumber(flags[2])
  if flags[1] then
    redis.call('DEL', K_WAKE)
    return nextDue, 1, 0, {}
  end
  if nextDue and nextDue <= now then
    local _
    _, nextDue = promoteDue(now, promoteLimit)
  end
  local ext = flags[3] or flags[4] or flags[5] or flags[6] or flags[7] or flags[13]
  if flags[7] then
    -- deleted: each consumer that sees it passes the news to the next blocked one
    if redis.call('RPUSH', K_WAKE, 'x') > 16 then redis.call('LTRIM', K_WAKE, 0, 15) end
    local ttl = redis.call('PTTL', K_META)
    if ttl > 0 then redis.call('PEXPIRE', K_WAKE, ttl) end
    return nil, 3, 0, {}
  end
  if flags[13] then
    -- The queue-wide concurrency: every worker's leases count (K_WORKING holds them). At the
    -- limit nothing is leased, and tokens are dropped: the end of a lease wakes a leaser
    -- when there is room (settles/ended.lua), so none spins meanwhile.
    local room = tonumber(flags[13]) - redis.call('ZCARD', K_WORKING)
    if room <= 0 then
      redis.call('DEL', K_WAKE)
      return nextDue, 0, 0, {}
    end
    if room < count then count = room end
  end
  if flags[10] then
    -- the queue's rate limit bounds this call; a spent window leases nothing until it ends
    local allowed, reopensAt = allowance(K_LIMITER, flags[10], count, now)
    if allowed == 0 then return earliest(nextDue, reopensAt), 0, 0, {} end
    count = allowed
    -- a queue that only had a hold (no limit of its own) stops checking once it ended
    if flags[10] == '0:0' and redis.call('EXISTS', K_LIMITER) == 0 then
      redis.call('HDEL', K_META, 'rl')
      flags[10] = nil
    end
  end
  if ext then glimitCache = tonumber(flags[8]) or 0 end
  local live, liveGroups = take(count, ext, flags, now)
  local liveRecs = hmgetMany(K_JOBS, live)
  local ghosts, exhausted = 0, #live < count
  if anyGhost(liveRecs, #live) then
    -- the usual case above copies nothing; here the records found are copied, and more taken
    local taken, groups, recs = live, liveGroups, liveRecs
    live, liveGroups, liveRecs = {}, ext and {} or nil, {}
    ghosts = dropGhosts(taken, groups, recs, live, liveGroups, liveRecs)
    while not exhausted and ghosts < MAX_GHOSTS do
      local want = count - #live
      taken, groups = take(want, ext, flags, now)
      local dropped = dropGhosts(taken, groups, hmgetMany(K_JOBS, taken), live, liveGroups, liveRecs)
      ghosts = ghosts + dropped
      exhausted = #taken < want
      if dropped == 0 then break end
    end
  end
  if ghosts > 0 then redis.call('HINCRBY', K_META, 'ghosts', ghosts) end
  if #live == 0 then
    if flags[5] and unfinishedCount() == 0 then
      wakeNeeded = true -- closed and drained: the next blocked consumer must see it too
      return nextDue, 2, ghosts, {}
    end
    -- Nothing leasable: any token left is stale. After ghosts-only rounds that did not reach
    -- the end of the queue, valid jobs may still wait: leave the tokens and wake a leaser.
    if exhausted or ghosts == 0 then redis.call('DEL', K_WAKE) else wakeNeeded = true end
    return earliest(nextDue, limitedUntil), 0, ghosts, {}
  end

  local leased, bytes = grantLeases(reply, now, reqId, live, liveRecs, leaseMs, liveGroups, defaults, flags[14])
  if flags[10] then limitedUntil = earliest(limitedUntil, spend(K_LIMITER, flags[10], #live, now)) end
  if flags[6] then
    local cm = redis.call('HINCRBY', K_STATS, 'cm', #leased)
    local cb = redis.call('HINCRBY', K_STATS, 'cb', bytes)
    emit({ type = 'stats', consumed = { messages = cm, bytes = cb } })
  end
  -- A woken leaser that filled its count and leaves work behind wakes the next blocked one
  -- (not while a rate limit ran out, or at the queue-wide concurrency: that one would find
  -- nothing it may take).
  if woken and #live == count and not limitedUntil
      and (not flags[13] or redis.call('ZCARD', K_WORKING) < tonumber(flags[13])) then
    if ungroupedPending() or (ext and redis.call('LLEN', K_GACTIVE) > 0) then wakeNeeded = true end
  end
  -- This call took the last pending jobs: 'drained' (BullMQ's), looked for only while
  -- someone listens, in O(1). A plain queue's take that came back short emptied the list and
  -- the prioritized set (adds/pending.lua takeUngrouped); else their lengths tell.
  if eventsOn() and ((exhausted and not ext) or not ungroupedPending())
      and (tonumber(redis.call('HGET', K_META, 'gp')) or 0) == 0 then
    emit({ type = 'drained' })
  end
  return earliest(nextDue, limitedUntil), 0, ghosts, leased
end
end -- of the block
