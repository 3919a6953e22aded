--[[
  Adds a flow (lib/core/flows/flows.ts addFlow()): a tree of jobs where a parent
  waits (state 'waiting-children', flows/flows.lua) until its children completed. All or
  nothing: every check comes first, then the writes; a refused call writes nothing.
  Leaves go through the add path (adds/add-jobs.lua); parents are recorded as waiting,
  with the set of their children. The jobs may live in several queues of one Cluster slot
  (lib/core/redis/keys.ts queueTag): each queue is checked and written with its keys bound,
  and publishes its own events and wake-up.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua) of the queue addFlow() is called on
    KEYS[16..]   the same 15 keys of each other queue of the flow, queue 2, 3, ... below

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2..]    jobs: n, then n jobs, parents before their children, the root first; 8 fields
                 each: id, custom ('1' a caller's idempotency key), record (meta w, pa
                 and pq already set), priority, due (as in add.lua; '' for a parent), group
                 ('' none), parent (1-based position of its parent in this list, 0 the root),
                 queue (1-based position of its queue's keys in KEYS)

  Output:
    { 'ok', 1 }        created
    { 'ok', 0 }        the root's custom id exists or its idempotency window is open: nothing
                       written (a generated root id found existing is this very request
                       replayed after a lost reply: answered as created)
    { 'exists', id, queue }  another job's custom id exists, or is within its idempotency window
    { 'closed' } | { 'deleted' }: the queue addFlow() is called on; { 'closed', queue } |
    { 'deleted', queue }: another queue of the flow
    { 'full', free slots, bound, queue }: a bounded queue without room for its jobs of the flow

  Events:
    added (each job), waiting-children (each parent), each in its queue; stats (produced totals,
    a queue with stats)
]]
eventsArg = ARGV[1] == '1'
local now = nowMs()
local function clock() return now end
local n = tonumber(ARGV[2])
local function field(i, f) return ARGV[3 + (i - 1) * 8 + f] end -- f: 0 id .. 6 parent, 7 queue
local queues = #KEYS / 15
local function bind(q) bindQueue(KEYS, (q - 1) * 15) end -- redis/keys.lua
local qOf, count = {}, {}
for i = 1, n do
  qOf[i] = tonumber(field(i, 7))
  count[qOf[i]] = (count[qOf[i]] or 0) + 1
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
for i = 1, n do
  bind(qOf[i])
  local id, custom = field(i, 0), field(i, 1) == '1'
  if redis.call('HEXISTS', K_JOBS, id) == 1 or (custom and inDedupWindow(id, clock)) then
    if i == 1 then return { 'ok', custom and 0 or 1 } end
    return { 'exists', id, qOf[i] }
  end
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
  local p = tonumber(field(i, 6))
  if p > 0 then
    kids[p] = kids[p] or {}
    local member = field(i, 0)
    if qOf[i] ~= qOf[p] then
      member = member .. '\n' .. tags[qOf[i]] -- a child in another queue (flows/flows.lua)
      foreign[i] = true
    end
    table.insert(kids[p], member)
  end
end
for q = 1, queues do
  if count[q] then
    bind(q)
    if q > 1 then freshCallState() end -- flows/flows.lua: this queue's events and wake-up
    local leaves, bytes = {}, 0
    for i = 1, n do
      if qOf[i] == q then
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
return { 'ok', 1 }
