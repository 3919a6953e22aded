--[[
  Parent/child flows (docs/flows.md). A parent waits in K_FLOWWAIT (state 'waiting-children')
  while depsKey(parent) holds its unfinished children; each child that completes leaves it
  and writes its result to kresKey(parent); the last one makes the parent pending. K_FLOWS
  names every parent that has such keys, so they are found without SCAN and go with it.
  Record meta w marks a flow's jobs (1 child, 2 parent, 4 a child whose death its parent
  ignores); pa is a child's parent id. A leased flow job's token carries w (grantLeases,
  leases/lease-jobs.lua), so that only a flow job's ack reaches this file: a plain ack
  costs nothing more. Needs redis/keys.lua, redis/calls.lua, redis/record.lua,
  events/events.lua, groups/groups.lua, backpressure/bound.lua, adds/pending.lua,
  settles/retention.lua.
]]

local function depsKey(id) return K_TAG .. ':deps:' .. id end -- set   a parent's unfinished children
local function kresKey(id) return K_TAG .. ':kres:' .. id end -- hash  a parent's child id -> result json

local function flowBit(w, bit) return w and math.floor(w / bit) % 2 == 1 end

-- The parent `pa` has no unfinished child left: it becomes pending (its priority, its group).
local function parentReady(pa)
  if redis.call('ZREM', K_FLOWWAIT, pa) == 0 then return end
  local rec = redis.call('HGET', K_JOBS, pa)
  if not rec then return end
  pushPending({ pa }, { metaInt(rec, 'p') or 0 }, { metaGroup(rec) or false })
  emit({ type = 'promoted', id = pa })
end

-- Child `id` no longer holds its parent (completed with `resultJson`, or nil: removed, or dead
-- and ignored). SREM makes it count once, whatever calls again (a replay, a redrive).
local function releaseParent(pa, id, resultJson)
  if redis.call('SREM', depsKey(pa), id) == 0 then return end
  if resultJson then redis.call('HSET', kresKey(pa), id, resultJson) end
  if redis.call('EXISTS', depsKey(pa)) == 0 then parentReady(pa) end
end

-- A flow job's lease was acked (its token carried `w`; the ack is already accepted).
local function flowAcked(id, w, resultJson, keepMs)
  if not w then return end
  if flowBit(w, 1) then
    local meta = decodeMeta(redis.call('HGET', K_JOBS, id) or '')
    if meta and meta.pa then releaseParent(meta.pa, id, resultJson ~= '' and resultJson or 'null') end
  end
  if flowBit(w, 2) and keepMs == 0 then
    -- completed and dropped at once: its children's results go with it
    redis.call('DEL', depsKey(id), kresKey(id))
    redis.call('HDEL', K_FLOWS, id)
  end
end

-- Flow job `id` (record `meta`) will never complete (`why` says why, as its parent's last
-- error): its parent goes on without it when the child says so (w 4), else dies too, and so
-- on up the tree.
local function failParents(id, meta, now, why)
  while meta and flowBit(meta.w, 1) and meta.pa do
    local pa = meta.pa
    if flowBit(meta.w, 4) then return releaseParent(pa, id, nil) end
    if redis.call('SREM', depsKey(pa), id) == 0 or redis.call('ZREM', K_FLOWWAIT, pa) == 0 then return end
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
    id, why = pa, 'child ' .. pa .. ' failed: ' .. why
  end
end

-- A flow job died (dead-lettered, `meta` its record's).
local function flowDied(id, meta, now, reason)
  failParents(id, meta, now, 'child ' .. id .. ' failed: ' .. tostring(reason))
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
      redis.call('DEL', depsKey(id), kresKey(id))
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
        failParents(id, meta, now, 'child ' .. id .. ' was removed')
      end
    end
  end
end

-- The unfinished descendants of `id` (children a parent still waits for, theirs, ...), parents
-- before their children.
local function flowPending(id)
  local out, i = {}, 0
  local parent = id
  while parent do
    for _, kid in ipairs(redis.call('SMEMBERS', depsKey(parent))) do out[#out + 1] = kid end
    i = i + 1
    parent = out[i]
  end
  return out
end
