--[[
  Deduplication ids (JobOptions.deduplication, README "Deduplication"), apart from the job id.
  The job an add created takes its deduplication id and holds it: dedupKey('ids') maps the id
  to '<mode><job id>', the mode its add gave (meta dm): 'u' until the job ends, 't' throttle
  (until its window in dedupKey('ttl') ends, whatever the job does), 'd' debounce. An add that
  meets a held id creates nothing: it is ignored, replaces the waiting holder's data and due
  time (debounce), or is kept in dedupKey('next') until the running holder ends
  (keepLastIfActive; the last one kept wins). A holder that ended, or whose record is gone,
  holds nothing: the next add takes the id over. The end of a 'u' or 'd' holder releases its
  id (adds/deduplication-ends.lua); it carries bit dedupIds.ENDS in its meta w, which its lease
  token copies, so that a job without a deduplication id pays nothing when it settles.
  Needs redis/keys.lua, redis/calls.lua, redis/record.lua, events/events.lua,
  adds/pending.lua, adds/delayed.lua, flows/flows.lua, management/remove.lua.
]]

-- The functions of this file and of adds/deduplication-ends.lua, in one table rather than as
-- locals: the shared code is one function (the library's main chunk), Lua allows a function
-- 200 locals, and the shared code holds nearly that many.
local dedupIds = {
  ENDS = 32, -- meta w bit (beside the flow bits, flows/flows.lua): the job's end releases its deduplication id
  OUTCOMES = { i = 'ignored', r = 'replaced', d = 'deferred' },
}

-- The deduplication id in a record's meta (dd), nil for none or an undecodable record.
function dedupIds.idOf(rec)
  local ok, meta = pcall(cjson.decode, metaPart(rec))
  if ok and type(meta) == 'table' and type(meta.dd) == 'string' then return meta.dd end
  return nil
end

-- The job holding deduplication id `did`, its mode and its state (as locateJob answers; '' for
-- a throttle holder, whose state does not matter); nil when none holds it now: never taken,
-- its throttle window over, its job gone or ended. `clock()` is now (read only for a throttle).
function dedupIds.holder(did, clock)
  local v = redis.call('HGET', dedupKey('ids'), did)
  if not v then return nil end
  local mode, id = string.sub(v, 1, 1), string.sub(v, 2)
  if mode == 't' then
    local ends = redis.call('ZSCORE', dedupKey('ttl'), did)
    if ends and tonumber(ends) > clock() then return id, mode, '' end
    return nil
  end
  if redis.call('HEXISTS', K_JOBS, id) == 0 then return nil end
  local state = locateJob(id)
  if state == 'completed' or state == 'dead' then return nil end
  return id, mode, state
end

-- What an add whose meta is `meta` does about its deduplication id: 'create' (its job takes
-- the id), or, with the holder's id: 'i' ignored, 'r' replaces the waiting holder's data and
-- due time (debounce, with the holder's state), 'd' kept until the running holder ends.
function dedupIds.outcome(meta, clock)
  local held, mode, state = dedupIds.holder(meta.dd, clock)
  if not held then return 'create' end
  if state == 'working' then
    if meta.dk == 1 then return 'd', held end
    -- debounce: a running job is no longer replaced; this add starts the next one
    if mode == 'd' then return 'create' end
    return 'i', held
  end
  if mode == 'd' and (state == 'pending' or state == 'delayed') then return 'r', held, state end
  return 'i', held
end

-- Job `id` takes `did` in `mode` ('u', 't' for `ttl` ms, 'd'). An add kept for the job before
-- goes: this job came after it. A throttle window left from an earlier holder needs no ZREM:
-- the mode says whether dedupKey('ttl') counts (dedupIds.forgetWindows checks it too).
function dedupIds.take(did, id, mode, ttl, clock)
  redis.call('HSET', dedupKey('ids'), did, mode .. id)
  redis.call('HDEL', dedupKey('next'), did)
  if mode == 't' then redis.call('ZADD', dedupKey('ttl'), clock() + ttl, did) end
end

-- Debounce: the waiting holder `held` (in `state`) gets the data of the add whose record is
-- `rec`, and that add's due time (`due` as addJobs takes it; none: pending now, where a
-- pending holder stays). Its options and history stay. Returns its new due time (nil: pending).
function dedupIds.replaceHeld(held, state, rec, due, clock)
  local old = redis.call('HGET', K_JOBS, held)
  local _, data = splitRecord(rec)
  redis.call('HSET', K_JOBS, held, metaPart(old) .. '\n' .. data)
  local at = dueTime(due, clock)
  if state == 'delayed' then
    unDelay(held)
    if at then addDelayed(held, at) else pushPending({ held }, { metaInt(old, 'p') or 0 }, { metaGroup(old) or false }) end
    refreshNextDue()
  elseif at then
    unqueuePending(held, old) -- O(position) in a pending list
    addDelayed(held, at)
  end
  return at
end

-- An add of job `id` (record `rec`, `due` as addJobs takes it; `flag` as addJobs reads it, '2'
-- or '3' with a custom id) that carries a deduplication id in its meta (dd; dm its mode, dt a
-- throttle's ms, dk keepLastIfActive). Returns true when the job is to be created (it took
-- the id), else addJobs's answer for it: 0 / 1 when its id exists (a duplicate custom id, or
-- this very request replayed), or 'i', 'r' or 'd' (dedupIds.outcome) and the holder's id.
function dedupIds.add(id, flag, rec, due, clock)
  if redis.call('HEXISTS', K_JOBS, id) == 1 then return flag == '3' and 0 or 1 end
  local meta = cjson.decode(metaPart(rec))
  local did = meta.dd
  local outcome, held, state = dedupIds.outcome(meta, clock)
  if outcome == 'create' then
    dedupIds.take(did, id, meta.dm, meta.dt, clock)
    return true
  end
  local runAt
  if outcome == 'r' then
    runAt = dedupIds.replaceHeld(held, state, rec, due, clock)
    redis.call('HDEL', dedupKey('next'), did) -- an add kept while the holder ran before is older than this one
  elseif outcome == 'd' then
    -- kept whole (flag, due, id, record), in place of any kept before
    redis.call('HSET', dedupKey('next'), did, flag .. due .. '\n' .. id .. '\n' .. rec)
  end
  if eventsOn() then emit({ type = 'deduplicated', id = held, deduplicationId = did, outcome = dedupIds.OUTCOMES[outcome], runAt = runAt }) end
  return outcome .. held
end

-- Frees `did` if job `id` holds it. Returns the add kept for that moment (as dedupIds.add stored
-- it), taken out too: the caller adds it or drops it.
function dedupIds.release(id, did)
  local v = redis.call('HGET', dedupKey('ids'), did)
  if not v or string.sub(v, 2) ~= id then return nil end
  redis.call('HDEL', dedupKey('ids'), did)
  local kept = redis.call('HGET', dedupKey('next'), did)
  if kept then redis.call('HDEL', dedupKey('next'), did) end
  return kept
end

-- A job removed (record `rec`): the id it held is free, and an add kept for its end goes with it.
function dedupIds.removed(id, rec)
  if not flowBit(metaInt(rec, 'w'), dedupIds.ENDS) then return end
  local did = dedupIds.idOf(rec)
  if did then dedupIds.release(id, did) end
end

-- Drained jobs (`ids`, records already gone): the ids they held are free. Read from the held
-- ids, not from the jobs: one HKEYS when the queue holds none.
function dedupIds.drained(ids)
  local dids = redis.call('HKEYS', dedupKey('ids'))
  if #dids == 0 then return end
  local drained = {}
  for _, id in ipairs(ids) do drained[id] = true end
  local holders = hmgetMany(dedupKey('ids'), dids)
  local free = {}
  for i, did in ipairs(dids) do
    local v = holders[i]
    if v and string.sub(v, 1, 1) ~= 't' and drained[string.sub(v, 2)] then free[#free + 1] = did end
  end
  if #free > 0 then
    callMany('HDEL', dedupKey('ids'), free)
    callMany('HDEL', dedupKey('next'), free)
  end
end

-- The sweep: throttle windows that ended by `now` (at most `limit`) are forgotten with the ids
-- whose holders they were. Returns how many.
function dedupIds.forgetWindows(now, limit)
  local ended = redis.call('ZRANGEBYSCORE', dedupKey('ttl'), '-inf', now, 'LIMIT', 0, limit)
  if #ended == 0 then return 0 end
  callMany('ZREM', dedupKey('ttl'), ended)
  local holders = hmgetMany(dedupKey('ids'), ended)
  local free = {}
  for i, did in ipairs(ended) do
    if holders[i] and string.sub(holders[i], 1, 1) == 't' then free[#free + 1] = did end
  end
  if #free > 0 then callMany('HDEL', dedupKey('ids'), free) end
  return #ended
end
