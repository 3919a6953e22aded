--[[
  Where a job is, and taking jobs out of the queue: job management (remove-job.lua,
  change-priority.lua, clean-completed.lua, drain.lua, purge-dead.lua), retention
  (settles/retention.lua: the sweep, and the trims at the end of a call) and get-job.lua. A
  removed job leaves every index it was in (pending list, prioritized set or group list,
  delayed set, working set and lease, done set and result, dead set and its retention,
  idempotency window) and its record; its
  lease, if it had one, ends the way an expired one does for its group's books, and the
  slot it held in a bounded queue is freed (settles/ended.lua). Needs redis/keys.lua,
  redis/record.lua, redis/lease-token.lua, events/events.lua, groups/groups.lua,
  settles/ended.lua, adds/delayed.lua, settles/retention.lua, flows/flows.lua.
]]

-- The state of a job that has a record, and its score there: 'working' (lease deadline, ''
-- when missing from the working set), 'delayed' (due time), 'completed' (end of retention,
-- which may have passed before a sweep came), 'dead' (time of death), 'waiting-children' (time
-- it began waiting for its children, flows/flows.lua), 'pending' (''). Scores
-- are bulk strings, as ZSCORE answers them. A lease is checked first: it is the fence.
local function locateJob(id)
  if redis.call('HEXISTS', K_LEASES, id) == 1 then return 'working', redis.call('ZSCORE', K_WORKING, id) or '' end
  local s = redis.call('ZSCORE', K_DELAYED, id)
  if s then return 'delayed', s end
  s = redis.call('ZSCORE', K_DONE, id)
  if s then return 'completed', s end
  s = redis.call('ZSCORE', K_DEAD, id)
  if s then return 'dead', s end
  s = redis.call('ZSCORE', K_FLOWWAIT, id) -- a parent waiting for its children (flows/flows.lua)
  if s then return 'waiting-children', s end
  return 'pending', ''
end

-- Takes a pending job out of its group's list, the prioritized set or the FIFO list. A list
-- is searched from its head: O(position). A group's list that empties leaves K_GROUPS; the
-- rotation drops the group at its next turn (leases/lease-jobs.lua takeFair).
local function unqueuePending(id, rec)
  local g = metaGroup(rec)
  if g then
    local gk = groupKey(g)
    if redis.call('LREM', gk, 1, id) > 0 then
      redis.call('HINCRBY', K_META, 'gp', -1)
      if redis.call('LLEN', gk) == 0 then redis.call('SREM', K_GROUPS, g) end
    end
  elseif redis.call('ZREM', K_PRIO, id) == 0 then
    redis.call('LREM', K_PENDING, 1, id)
  end
end

-- Ends a lease without settling it: its token no longer holds the job, so the holder's ack,
-- nack, requeue, reject and touch change nothing and answer false (a stale lease).
local function revokeLease(id, ended)
  local token = redis.call('HGET', K_LEASES, id)
  redis.call('HDEL', K_LEASES, id)
  redis.call('ZREM', K_WORKING, id)
  if token then leaseEnded(ended, select(4, parseToken(token))) end
end

-- Completed jobs' records and results, gone for good (their idempotency windows stay:
-- K_DEDUP is the sweep's to forget). For the sweep and clean-completed.lua.
local function forgetCompleted(ids)
  flowJobsGone(ids)
  callMany('ZREM', K_DONE, ids)
  callMany('HDEL', K_JOBS, ids)
  callMany('HDEL', K_RESULTS, ids)
  forgetProgress(ids)
end

-- Dead jobs out of the dead set and its retention index (a retry, a redrive, a removal).
local function unDead(ids)
  callMany('ZREM', K_DEAD, ids)
  callMany('ZREM', K_DEADEXP, ids)
end

-- Dead jobs' records gone for good, with their progress and lines. For purge-dead.lua and
-- retention.
local function forgetDead(ids)
  unDead(ids)
  flowJobsGone(ids)
  callMany('HDEL', K_JOBS, ids)
  forgetProgress(ids)
end

-- The trims the call's finished jobs asked for (settles/retention.lua): their dead jobs kept
-- 0 ms, then the oldest completed and dead jobs beyond the smallest count asked for, at most
-- the removals those jobs allowed. Nothing when none asked. Called last by the calls that
-- settle jobs (settle.lua, lease.lua, sweep.lua).
local function flushRetention()
  if doneMost then
    local excess = math.min(redis.call('ZCARD', K_DONE) - doneMost, doneBudget)
    if excess > 0 then forgetCompleted(redis.call('ZRANGE', K_DONE, 0, excess - 1)) end
  end
  if deadDrop then forgetDead(deadDrop) end
  if deadMost then
    local excess = math.min(redis.call('ZCARD', K_DEAD) - deadMost, deadBudget)
    if excess > 0 then forgetDead(redis.call('ZRANGE', K_DEAD, 0, excess - 1)) end
  end
end

-- Removes job `id` (record `rec`, in `state` as locateJob answers) from wherever it is,
-- with its result and its idempotency window, so its id may be added again. An unfinished
-- job frees its slot (ended.freed); the caller flushes `ended` and, after removing delayed
-- jobs, refreshes nextDue (adds/delayed.lua).
local function removeJob(id, rec, state, ended)
  if state == 'pending' then
    unqueuePending(id, rec)
  elseif state == 'delayed' then
    unDelay(id)
  elseif state == 'working' then
    revokeLease(id, ended)
  elseif state == 'completed' then
    redis.call('ZREM', K_DONE, id)
    redis.call('HDEL', K_RESULTS, id)
  else
    unDead({ id })
  end
  redis.call('ZREM', K_DEDUP, id)
  flowJobsGone({ id }) -- a parent's flow keys go; a parent still waiting for it fails
  redis.call('HDEL', K_JOBS, id)
  forgetProgress({ id })
  if state == 'pending' or state == 'delayed' or state == 'working' or state == 'waiting-children' then ended.freed = ended.freed + 1 end
  emit({ type = 'removed', id = id })
end

-- Applies the books of a call that removed unfinished jobs: slots freed in a bounded queue
-- wake its blocked producers, a closed queue left without unfinished jobs wakes a blocked
-- consumer, and ended leases update their groups (settles/ended.lua).
local function flushRemoved(ended)
  if ended.freed > 0 then ended.ext = true end
  flushEnded(ended)
end

-- Removes job `id` (as removeJob) and `kids`, the unfinished descendants it waits for as a
-- flow's parent (flowPending(id), read first by the caller, which may refuse a leased one),
-- then applies the call's books (remove-job.lua, cancel-job.lua).
local function removeWithKids(id, rec, state, kids, ended)
  removeJob(id, rec, state, ended)
  local delayed = state == 'delayed'
  for _, kid in ipairs(kids) do
    local krec = redis.call('HGET', K_JOBS, kid)
    if krec then
      local kstate = locateJob(kid)
      delayed = delayed or kstate == 'delayed'
      removeJob(kid, krec, kstate, ended)
    end
  end
  if delayed then refreshNextDue() end
  flushRemoved(ended)
end
