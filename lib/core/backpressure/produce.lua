--[[
  Adds jobs on the managed path (lib/core/backpressure/backpressure.ts, for queue-settings.ts):
  refuses a closed or deleted queue, fences an exclusive producer, enforces the bound with
  blocked-producer waiters, routes grouped jobs to their group, counts stats. Checks come
  first, then the writes: a refused call adds nothing (a full one may register its waiter).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not; a
                 partition's producer adds ':<epoch>', its map's (as in add.lua)
    ARGV[2]      waiter: waiter id of this producer ('' none)
    ARGV[3]      mode: 'w' may wait (a full queue registers the waiter) | 't' try only
    ARGV[4]      keep: '1' stays a registered waiter after this add (it has more adds waiting),
                 '0' leaves
    ARGV[5]      waiterTtlMs: waiter registration ttl (ms)
    ARGV[6]      roleValue: producer role value when exclusive ('' not exclusive): must hold the role
    ARGV[7]      hasSettings: '1' when this producer stores bound / stats / glimit; when
                 they are gone from Redis (e.g. the queue was deleted and is used again),
                 the reply is 'configure'
    ARGV[8..]    jobs: n, then n jobs of 6 fields each:
                   id, flag, record, priority, due (as in add.lua), group ('' none)

  Output:
    { 'ok', { per job, as add.lua answers: 1 created, 0 duplicate, or a deduplicated one's outcome } }
    { 'closed' } | { 'deleted' } | { 'configure' }
    { 'moved' }: a partition that saw a later epoch than the producer's map (as in add.lua)
    { 'inuse', holder of the producer role ('' none) }
    { 'full', free slots (>= 0), producers waiting (with this one once registered), bound }
    { 'toobig', bound }: more new jobs than the bound, they can never fit

  Events:
    added (each job created); deduplicated (as add.lua); stats (produced totals, a queue with
    stats)
]]
eventsArg = string.byte(ARGV[1]) == 49
local now = nowMs()
local function clock() return now end
local m = redis.call('HMGET', K_META, 'closed', 'bound', 'stats', 'del', 'glimit', 'cfg', 'pe')
if m[4] then return { 'deleted' } end
if movedSince(ARGV[1], m[7]) then return { 'moved' } end
if m[1] then return { 'closed' } end
if ARGV[7] == '1' and not m[6] then return { 'configure' } end
if ARGV[6] ~= '' then
  local holder = redis.call('GET', roleKey('producer'))
  if holder ~= ARGV[6] then return { 'inuse', holder or '' } end
end
glimitCache = tonumber(m[5]) or 0
local n = tonumber(ARGV[8])
local function item(i) return 9 + (i - 1) * 6 end

local bound = tonumber(m[2]) or 0
local waiter, ttl = ARGV[2], tonumber(ARGV[5])
local free = 0
if bound > 0 then
  local need = 0
  local dids -- deduplication ids met in this call: the first job of each may need a slot
  for i = 1, n do
    local b = item(i)
    local flag = ARGV[b + 1]
    if redis.call('HEXISTS', K_JOBS, ARGV[b]) == 0 then -- an existing id (a replay, a duplicate) needs no slot
      if (flag == '1' or flag == '3') and inDedupWindow(ARGV[b], clock) then
        -- its idempotency window is open: nothing is added
      elseif flag == '2' or flag == '3' then
        -- a job whose deduplication id is held makes none now (adds/deduplication.lua)
        local meta = cjson.decode(metaPart(ARGV[b + 2]))
        dids = dids or {}
        if not dids[meta.dd] and dedupIds.outcome(meta, clock) == 'create' then need = need + 1 end
        dids[meta.dd] = true
      else
        need = need + 1
      end
    end
  end
  if need > bound then return { 'toobig', bound } end
  local waiting = redis.call('ZCARD', K_WAITERS)
  local registered = false
  if waiting > 0 then
    -- crashed waiters are forgotten
    waiting = waiting - redis.call('ZREMRANGEBYSCORE', K_WAITERS, '-inf', now)
    registered = waiter ~= '' and redis.call('ZSCORE', K_WAITERS, waiter) ~= false
  end
  free = bound - unfinishedCount()
  -- While producers wait, a newcomer queues behind them even if a slot is free.
  if need > free or (waiting > 0 and not registered) then
    if ARGV[3] == 'w' and waiter ~= '' then
      redis.call('ZADD', K_WAITERS, now + ttl, waiter)
      if not registered then
        waiting = waiting + 1
        if free > 0 then notifyWaiters(free) end -- free slots: the waiters ahead must use them
      end
    end
    return { 'full', math.max(free, 0), waiting, bound }
  end
  free = free - need
  if registered then
    if ARGV[4] == '1' then
      redis.call('ZADD', K_WAITERS, now + ttl, waiter)
    else
      redis.call('ZREM', K_WAITERS, waiter)
      waiting = waiting - 1
    end
  end
  if waiting > 0 and free > 0 then
    notifyWaiters(free) -- room left: the next waiter may take it
  elseif waiting == 0 and registered then
    redis.call('DEL', K_NOTFULL) -- the last waiter left: its unused tokens go
  end
end

local out, created, bytes = addJobs(ARGV, 9, 6, n, clock, m[3])
if m[3] and created > 0 then countProduced(created, bytes) end
flushWake()
flushEvents()
return { 'ok', out }
