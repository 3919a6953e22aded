--[[
  Adds a flow (lib/core/flows/flows.ts addFlow()): a tree of jobs where a parent
  waits (state 'waiting-children', flows/flows.lua) until its children completed. All or
  nothing: every check comes first, then the writes; a refused call writes nothing.
  Leaves go through the add path (adds/add-jobs.lua); parents are recorded as waiting,
  with the set of their children. The jobs may live in several queues of one Cluster slot
  (lib/core/redis/keys.ts queueTag): each queue is checked and written with its keys bound,
  and publishes its own events and wake-up.
  Also a running job's children (flows.ts addChildren(), a handler's job.addChildren()): the
  root is then that job, leased with `token`; it is not written, only marked a parent (meta w)
  and given the new children, which it waits for once its handler calls waitForChildren
  (settles/settle-items.lua op 'w'). A child whose id exists, or whose custom id is within its
  idempotency window, is not added again, nor its children (a handler that runs again after a
  crash adds the same children): answered as not created, or as created when its id is a
  generated one (this very request, replayed after a lost reply).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua) of the queue addFlow() is called on
    KEYS[16..]   the same 15 keys of each other queue of the flow, queue 2, 3, ... below

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      token: '' for addFlow(); for addChildren() the lease token of the root
    ARGV[3..]    jobs: n, then n jobs, parents before their children, the root first; 8 fields
                 each: id, custom ('1' a caller's idempotency key), record (meta w, pa
                 and pq already set), priority, due (as in add.lua; '' for a parent), group
                 ('' none), parent (1-based position of its parent in this list, 0 the root),
                 queue (1-based position of its queue's keys in KEYS)

  Output:
    { 'ok', 1 }        created
    { 'ok', 0 }        the root's custom id exists or its idempotency window is open: nothing
                       written (a generated root id found existing is this very request
                       replayed after a lost reply: answered as created)
    { 'ok', c1, c2, ... }  addChildren(): per child of the root, 1 created, 0 not (above)
    { 'lost' }         addChildren(): that token no longer holds the root; nothing written
    { 'exists', id, queue }  another job's custom id exists, or is within its idempotency window
    { 'closed' } | { 'deleted' }: the queue addFlow() is called on; { 'closed', queue } |
    { 'deleted', queue }: another queue of the flow
    { 'full', free slots, bound, queue }: a bounded queue without room for its jobs of the flow

  Events:
    added (each job), waiting-children (each parent but a running root), each in its queue;
    stats (produced totals, a queue with stats)
]]
eventsArg = ARGV[1] == '1'
local token = ARGV[2]
local running = token ~= '' -- addChildren(): the root runs, leased with token
local now = nowMs()
local function clock() return now end
local n = tonumber(ARGV[3])
local function field(i, f) return ARGV[4 + (i - 1) * 8 + f] end -- f: 0 id .. 6 parent, 7 queue
local queues = #KEYS / 15
local function bind(q) bindQueue(KEYS, (q - 1) * 15) end -- redis/keys.lua
local qOf, parentOf = {}, {}
for i = 1, n do
  qOf[i] = tonumber(field(i, 7))
  parentOf[i] = tonumber(field(i, 6))
end

-- checks: nothing is written before every job passed
local metas, tags = {}, {}
for q = 1, queues do
  bind(q)
  tags[q] = K_TAG
  local m = redis.call('HMGET', K_META, 'closed', 'bound', 'stats', 'del')
  -- the call's own queue answers as every call does (a deleted one: lib/core/registry/registry.ts)
  if m[4] then return q == 1 and { 'deleted' } or { 'deleted', q } end
  if m[1] then return q == 1 and { 'closed' } or { 'closed', q } end
  metas[q] = m
end
if running then
  bind(1)
  if redis.call('HGET', K_LEASES, field(1, 0)) ~= token then return { 'lost' } end
end
-- skip[i]: not written (addChildren(): the root, a child that exists and its children);
-- made[k]: the answer for the root's k-th child
local skip, made = {}, {}
for i = 1, n do
  if running and i == 1 then
    skip[i] = true
  elseif running and skip[parentOf[i]] and parentOf[i] > 1 then
    skip[i] = true
  else
    bind(qOf[i])
    local id, custom = field(i, 0), field(i, 1) == '1'
    local exists = redis.call('HEXISTS', K_JOBS, id) == 1 or (custom and inDedupWindow(id, clock))
    if running and parentOf[i] == 1 then
      made[#made + 1] = (exists and custom) and 0 or 1
      skip[i] = exists or nil
    elseif exists then
      if i == 1 then return { 'ok', custom and 0 or 1 } end
      return { 'exists', id, qOf[i] }
    end
  end
end
local count = {}
for i = 1, n do
  if not skip[i] then count[qOf[i]] = (count[qOf[i]] or 0) + 1 end
end
for q = 1, queues do
  local bound = tonumber(metas[q][2]) or 0
  if bound > 0 and count[q] then
    bind(q)
    local free = bound - unfinishedCount()
    if count[q] > free then return { 'full', math.max(free, 0), bound, q } end
  end
end

-- writes, queue by queue
local kids, foreign = {}, {}
for i = 1, n do
  local p = parentOf[i]
  if p > 0 and not skip[i] then
    kids[p] = kids[p] or {}
    local member = field(i, 0)
    if qOf[i] ~= qOf[p] then
      member = member .. '\n' .. tags[qOf[i]] -- a child in another queue (flows/flows.lua)
      foreign[i] = true
    end
    table.insert(kids[p], member)
  end
end
if running and kids[1] then
  -- the running root becomes a parent: its later leases' tokens carry w 2 (leases/lease-jobs.lua)
  bind(1)
  local id = field(1, 0)
  local meta, data = decodeMeta(redis.call('HGET', K_JOBS, id))
  if meta and not flowBit(meta.w, 2) then
    meta.w = (meta.w or 0) + 2
    redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
  end
  redis.call('HSET', K_FLOWS, id, '1')
  callMany('SADD', depsKey(id), kids[1])
  callMany('RPUSH', kidsKey(id), kids[1])
  runningParents.note(id, token, now) -- flows/flows.lua: its lease may not know it a parent
end
for q = 1, queues do
  if count[q] then
    bind(q)
    if q > 1 then freshCallState() end -- flows/flows.lua: this queue's events and wake-up
    local leaves, bytes = {}, 0
    for i = 1, n do
      if qOf[i] == q and not skip[i] then
        local id, rec = field(i, 0), field(i, 2)
        if metas[q][3] then bytes = bytes + dataBytes(rec) end
        if kids[i] then
          redis.call('HSET', K_JOBS, id, rec)
          redis.call('ZADD', K_FLOWWAIT, now, id)
          redis.call('HSET', K_FLOWS, id, '1')
          callMany('SADD', depsKey(id), kids[i])
          callMany('RPUSH', kidsKey(id), kids[i]) -- for getFlow(), in the flow's order
          if eventsOn() then emit({ type = 'added', id = id, name = metaName(rec) }) end
          emit({ type = 'waiting-children', id = id })
        else
          for f = 0, 5 do leaves[#leaves + 1] = field(i, f) end
        end
        -- its removal, or its queue's deletion, must reach its parent (flows/flows.lua)
        if foreign[i] then redis.call('HSET', K_FLOWS, '\n' .. id, '1') end
      end
    end
    addJobs(leaves, 1, 6, #leaves / 6, clock, false)
    if metas[q][3] then countProduced(count[q], bytes) end
    flushWake()
    flushEvents()
  end
end
if not running then return { 'ok', 1 } end
local out = { 'ok' }
for k = 1, #made do out[k + 1] = made[k] end
return out
