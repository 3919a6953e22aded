--[[
  Parent/child flows (docs/flows.md). A parent waits in K_FLOWWAIT (state 'waiting-children')
  while depsKey(parent) holds its unfinished children; each child that completes leaves it
  and writes its result to kresKey(parent); the last one makes the parent pending. K_FLOWS
  names every parent that has such keys, so they are found without SCAN and go with it; its
  fields '\n<id>' name the children of this queue that still hold a parent in another queue
  (add-flow.lua), so that deleting their queue fails or releases their parents.
  Record meta w marks a flow's jobs (1 child, 2 parent; a child's failure policy: 4 'ignore',
  8 'continue', 16 'remove', none 'fail'); kfailKey(parent) keeps the errors of the children
  it went on without ('ignore', 'continue'), and under the field '\n' (no id has it) what a
  parent that was not waiting learns when it next waits (a running parent's children:
  job.addChildren, runningParents.await() below); pa is a child's parent id, pq its parent's queue tag when that is another queue
  (of the same Cluster slot, lib/core/redis/keys.ts queueTag): such a child is the member
  '<id>\n<its own tag>' of depsKey(parent) (ids have no control characters), and its steps
  on the parent run bound to the parent's queue (enterQueue). A leased flow job's token carries w (grantLeases,
  leases/lease-jobs.lua), so that only a flow job's ack reaches this file: a plain ack
  costs nothing more. Needs redis/keys.lua, redis/calls.lua, redis/record.lua,
  events/events.lua, groups/groups.lua, backpressure/bound.lua, adds/pending.lua,
  settles/retention.lua.
]]

local function depsKey(id) return K_TAG .. ':deps:' .. id end -- set   a parent's unfinished children
local function kresKey(id) return K_TAG .. ':kres:' .. id end -- hash  a parent's child id -> result json
local function kfailKey(id) return K_TAG .. ':kfail:' .. id end -- hash a parent's child id -> error, the children it went on without
local function kidsKey(id) return K_TAG .. ':kids:' .. id end   -- list  all of a parent's children (deps members), in the flow's order

local function flowBit(w, bit) return w and math.floor(w / bit) % 2 == 1 end

-- The per-call state of the queue bound now (begin() lists it): put aside while a flow step
-- works in another queue, whose events, wake-up and settings are its own.
local function callState()
  return { events, listening, wakeNeeded, glimitCache, gFlagSet, limitedUntil, notesFlag, droppedIds, doneMost, doneBudget, deadMost, deadBudget, deadDrop }
end
local function setCallState(s)
  events, listening, wakeNeeded, glimitCache, gFlagSet, limitedUntil, notesFlag = s[1], s[2], s[3], s[4], s[5], s[6], s[7]
  droppedIds, doneMost, doneBudget, deadMost, deadBudget, deadDrop = s[8], s[9], s[10], s[11], s[12], s[13]
end
-- A queue's state at the start of a call (eventsArg is the call's, kept).
local function freshCallState() setCallState({ {}, nil, false, nil, false }) end

local homeQueue -- per call (reset by begin()): { tag, state } of the call's own queue while a step works in another

-- Binds the queue of tag `tag` (a parent's pq; nil stays), its own events and wake-up
-- published when the step leaves it.
local function enterQueue(tag)
  if not tag or tag == K_TAG then return end
  if homeQueue then
    flushWake()
    flushEvents()
  else
    homeQueue = { K_TAG, callState() }
  end
  bindTag(tag)
  freshCallState()
end

-- Back to the call's own queue, after a step in another.
local function leaveQueue()
  if not homeQueue then return end
  flushWake()
  flushEvents()
  bindTag(homeQueue[1])
  setCallState(homeQueue[2])
  homeQueue = nil
end

-- The member of its parent's depsKey that child `id` of the bound queue is, as it stops
-- holding its parent: a child of a parent in another queue leaves K_FLOWS too (add-flow.lua).
local function depsMember(id, meta)
  if not meta.pq then return id end
  redis.call('HDEL', K_FLOWS, '\n' .. id)
  return id .. '\n' .. K_TAG
end

-- The parent `pa` has no unfinished child left: it becomes pending (its priority, its group).
-- False when it was not waiting (it runs, or will: a running parent's children).
local function parentReady(pa)
  if redis.call('ZREM', K_FLOWWAIT, pa) == 0 then return false end
  local rec = redis.call('HGET', K_JOBS, pa)
  if not rec then return true end
  pushPending({ pa }, { metaInt(rec, 'p') or 0 }, { metaGroup(rec) or false })
  emit({ type = 'promoted', id = pa })
  return true
end

-- A parent that was not waiting when a child died: 'c' it runs again as soon as it waits
-- (policy 'continue'), 'f<error>' it dies then (policy 'fail'). The first such death decides,
-- as for a waiting parent. A parent that completed without waiting and was dropped leaves its
-- keys to its children: they go here as in releaseParent.
-- What this file keeps for parents whose children were added as they ran (job.addChildren):
-- one table, one local of the shared code (whose locals Lua bounds).
local runningParents = {}

function runningParents.mark(pa, mark)
  if redis.call('HEXISTS', K_JOBS, pa) == 1 then
    redis.call('HSETNX', kfailKey(pa), '\n', mark)
  else
    redis.call('DEL', depsKey(pa), kresKey(pa), kfailKey(pa), kidsKey(pa))
    redis.call('HDEL', K_FLOWS, pa)
  end
end

-- Child `id` (`member` of its parent's deps) no longer holds its parent (completed with
-- `resultJson`, or nil: removed, or dead and gone without). SREM makes it count once, whatever
-- calls again (a replay, a redrive): false when it counted already. A parent that completed
-- without waiting for its children (job.addChildren) and was dropped leaves its keys to them:
-- they go with the first child that finds it gone (false: nothing more to tell it).
local function releaseParent(pa, member, id, resultJson)
  if redis.call('SREM', depsKey(pa), member) == 0 then return false end
  if redis.call('HEXISTS', K_JOBS, pa) == 0 then
    redis.call('DEL', depsKey(pa), kresKey(pa), kfailKey(pa), kidsKey(pa))
    redis.call('HDEL', K_FLOWS, pa)
    return false
  end
  if resultJson then redis.call('HSET', kresKey(pa), id, resultJson) end
  if redis.call('EXISTS', depsKey(pa)) == 0 then parentReady(pa) end
  return true
end

-- A flow job's lease was acked (its token carried `w`; the ack is already accepted).
local function flowAcked(id, w, resultJson, keepMs)
  if not w then return end
  if flowBit(w, 1) then
    local meta = decodeMeta(redis.call('HGET', K_JOBS, id) or '')
    if meta and meta.pa then
      local member = depsMember(id, meta)
      enterQueue(meta.pq)
      releaseParent(meta.pa, member, id, resultJson ~= '' and resultJson or 'null')
      leaveQueue()
    end
  end
  if flowBit(w, 2) and keepMs == 0 then
    -- completed and dropped at once: its children's results go with it
    redis.call('DEL', depsKey(id), kresKey(id), kfailKey(id), kidsKey(id))
    redis.call('HDEL', K_FLOWS, id)
  end
end

-- Flow job `id` (record `meta`) will never complete (`err` its error, `why` its parent's last
-- error should the parent die): by the child's failure bits, its parent goes on without it and
-- keeps its error in kfailKey (w 4 'ignore'), runs at once with the error kept (8
-- 'continue'), goes on without a trace of it (16 'remove'), else dies too, and so on up the
-- tree, queue to queue.
local function failParents(id, meta, now, err, why)
  while meta and flowBit(meta.w, 1) and meta.pa do
    local pa, member = meta.pa, depsMember(id, meta)
    enterQueue(meta.pq)
    local ignore, goOn = flowBit(meta.w, 4), flowBit(meta.w, 8)
    if ignore or goOn or flowBit(meta.w, 16) then
      -- a waiting parent runs now (releaseParent made it pending if this was its last child);
      -- one that runs learns it at its next wait
      local waiting = goOn and redis.call('ZSCORE', K_FLOWWAIT, pa)
      if releaseParent(pa, member, id, nil) then
        if ignore or goOn then redis.call('HSET', kfailKey(pa), id, err) end
        if goOn and not parentReady(pa) and not waiting then runningParents.mark(pa, 'c') end
      end
      break
    end
    if redis.call('SREM', depsKey(pa), member) == 0 then break end
    if redis.call('ZREM', K_FLOWWAIT, pa) == 0 then
      runningParents.mark(pa, 'f' .. why)
      break
    end
    redis.call('DEL', depsKey(pa)) -- its other children no longer hold it
    local pdata
    meta, pdata = decodeMeta(redis.call('HGET', K_JOBS, pa) or '')
    if meta then
      meta.e = why
      redis.call('HSET', K_JOBS, pa, encodeRecord(meta, pdata))
    end
    addDead(pa, meta or {}, now) -- settles/retention.lua
    emit({ type = 'dead', id = pa, error = why })
    notifyWaiters(1) -- a bounded queue: the parent's slot is free
    id, err, why = pa, why, 'child ' .. pa .. ' failed: ' .. why
  end
  leaveQueue()
end

-- A running parent's handler waits for its children (job.waitForChildren; settles/
-- settle-items.lua op 'w', which ended its lease): 'wait' while any is unfinished (it is in
-- K_FLOWWAIT now, pending again once they are done), 'run' when it may run again at once,
-- 'dead' and the error when a child it cannot go on without died meanwhile (runningParents.mark).
function runningParents.await(id, now)
  local mark = redis.call('HGET', kfailKey(id), '\n')
  if mark then
    redis.call('HDEL', kfailKey(id), '\n')
    if mark ~= 'c' then
      redis.call('DEL', depsKey(id)) -- its other children no longer hold it, as in failParents
      return 'dead', string.sub(mark, 2)
    end
    return 'run'
  end
  if redis.call('EXISTS', depsKey(id)) == 0 then return 'run' end
  redis.call('ZADD', K_FLOWWAIT, now, id)
  emit({ type = 'waiting-children', id = id })
  return 'wait'
end

-- A flow job died (dead-lettered, `meta` its record's).
local function flowDied(id, meta, now, reason)
  failParents(id, meta, now, tostring(reason), 'child ' .. id .. ' failed: ' .. tostring(reason))
end

-- Jobs about to leave for good (records still there): a parent's flow keys go; a child that
-- still held its parent (removed before it completed) fails it as a death would, with
-- 'child <id> was removed' (a parent must not run without a child that never ran). Parents
-- go first, so that the children removed with them (drain.lua) hold nothing any more. One
-- EXISTS for a queue that never had a flow.
local function flowJobsGone(ids)
  if #ids == 0 or redis.call('EXISTS', K_FLOWS) == 0 then return end
  local recs = hmgetMany(K_JOBS, ids)
  local flags = {}
  for i, id in ipairs(ids) do
    flags[i] = recs[i] and metaInt(recs[i], 'w')
    if flowBit(flags[i], 2) then
      redis.call('DEL', depsKey(id), kresKey(id), kfailKey(id), kidsKey(id))
      redis.call('HDEL', K_FLOWS, id)
      redis.call('ZREM', K_FLOWWAIT, id)
    end
  end
  local now
  for i, id in ipairs(ids) do
    if flowBit(flags[i], 1) then
      local meta = decodeMeta(recs[i])
      if meta and meta.pa then
        now = now or nowMs()
        failParents(id, meta, now, 'removed', 'child ' .. id .. ' was removed')
      end
    end
  end
end

-- A running job became a parent under a lease granted before (add-flow.lua): that lease's
-- token does not say so, so an ack that drops the job at once (keepCompleted 0) leaves its
-- keys, and no child may be left to find it gone. It is listed in this zset (id -> when last
-- looked at) until a sweep (leases/sweep.lua) finds its lease over: its keys go then if it is
-- gone; else its record says it is a parent, and removals take them (flowJobsGone).
function runningParents.key() return K_TAG .. ':rparents' end

function runningParents.note(id, token, now)
  local _, _, flow = parseToken(token)
  if not flowBit(flow, 2) then redis.call('ZADD', runningParents.key(), now, id) end
end

-- The oldest `limit` listed; those still under their first lease go to the back. One EXISTS
-- for a queue without any.
function runningParents.sweepKeys(limit, now)
  local key = runningParents.key()
  if redis.call('EXISTS', key) == 0 then return end
  for _, pa in ipairs(redis.call('ZRANGE', key, 0, limit - 1)) do
    if redis.call('HEXISTS', K_JOBS, pa) == 0 then
      redis.call('DEL', depsKey(pa), kresKey(pa), kfailKey(pa), kidsKey(pa))
      redis.call('HDEL', K_FLOWS, pa)
      redis.call('ZREM', key, pa)
    elseif redis.call('HEXISTS', K_LEASES, pa) == 0 then
      redis.call('ZREM', key, pa)
    else
      redis.call('ZADD', key, now, pa)
    end
  end
end

-- The unfinished descendants of `id` (record `rec`, in `state`) in its own queue (children a
-- parent still waits for, or will: added as it ran, job.addChildren; theirs, ...), parents
-- before their children; none for a finished job, which leaves them. Children in other
-- queues are not among them.
local function flowPending(id, rec, state)
  if state == 'completed' or state == 'dead' or not flowBit(metaInt(rec, 'w'), 2) then return {} end
  local out, i = {}, 0
  local parent = id
  while parent do
    for _, kid in ipairs(redis.call('SMEMBERS', depsKey(parent))) do
      if not string.find(kid, '\n', 1, true) then out[#out + 1] = kid end
    end
    i = i + 1
    parent = out[i]
  end
  return out
end
