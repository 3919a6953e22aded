--[[
  Adds a flow (lib/core/flows/flows.ts addFlow()): a tree of jobs in this queue where a parent
  waits (state 'waiting-children', flows/flows.lua) until its children completed. All or
  nothing: every check comes first, then the writes; a refused call writes nothing.
  Leaves go through the add path (adds/add-jobs.lua); parents are recorded as waiting,
  with the set of their children.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2..]    jobs: n, then n jobs, parents before their children, the root first; 7 fields
                 each: id, custom ('1' a caller's idempotency key), record (meta w
                 and pa already set), priority, due (as in add.lua; '' for a parent), group
                 ('' none), parent (1-based position of its parent in this list, 0 the root)

  Output:
    { 'ok', 1 }        created
    { 'ok', 0 }        the root's custom id exists or its idempotency window is open: nothing
                       written (a generated root id found existing is this very request
                       replayed after a lost reply: answered as created)
    { 'exists', id }   another job's custom id exists, or is within its idempotency window
    { 'closed' } | { 'deleted' }
    { 'full', free slots, bound }: a bounded queue without room for every job of the flow

  Events:
    added (each job), waiting-children (each parent); stats (produced totals, a queue with stats)
]]
eventsArg = ARGV[1] == '1'
local now = nowMs()
local function clock() return now end
local n = tonumber(ARGV[2])
local function field(i, f) return ARGV[3 + (i - 1) * 7 + f] end -- f: 0 id .. 6 parent

local m = redis.call('HMGET', K_META, 'closed', 'bound', 'stats', 'del')
if m[4] then return { 'deleted' } end
if m[1] then return { 'closed' } end

-- checks: nothing is written before every job passed
for i = 1, n do
  local id, custom = field(i, 0), field(i, 1) == '1'
  if redis.call('HEXISTS', K_JOBS, id) == 1 or (custom and inDedupWindow(id, clock)) then
    if i == 1 then return { 'ok', custom and 0 or 1 } end
    return { 'exists', id }
  end
end
local bound = tonumber(m[2]) or 0
if bound > 0 then
  local free = bound - unfinishedCount()
  if n > free then return { 'full', math.max(free, 0), bound } end
end

-- writes
local leaves, kids, bytes = {}, {}, 0
for i = 1, n do
  local p = tonumber(field(i, 6))
  if p > 0 then
    kids[p] = kids[p] or {}
    table.insert(kids[p], field(i, 0))
  end
end
for i = 1, n do
  local id, rec = field(i, 0), field(i, 2)
  if m[3] then bytes = bytes + dataBytes(rec) end
  if kids[i] then
    redis.call('HSET', K_JOBS, id, rec)
    redis.call('ZADD', K_FLOWWAIT, now, id)
    redis.call('HSET', K_FLOWS, id, '1')
    callMany('SADD', depsKey(id), kids[i])
    emit({ type = 'added', id = id })
    emit({ type = 'waiting-children', id = id })
  else
    for f = 0, 5 do leaves[#leaves + 1] = field(i, f) end
  end
end
addJobs(leaves, 1, 6, #leaves / 6, clock, false)
if m[3] then countProduced(n, bytes) end
flushWake()
flushEvents()
return { 'ok', 1 }
