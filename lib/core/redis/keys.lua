--[[
  The keys of one queue, bound per call by begin() (redis/begin.lua). Every relq function
  sees the same queue keys, in the order of QUEUE_KEYS in lib/core/redis/keys.ts; lease
  and settle get one more, their request's replay record (KEYS[16], redis/replay.lua). An
  operation on one queue is passed only the first of them and its extra keys (expandKeys).
  The other keys are derived from the queue's hash tag instead of being passed in KEYS: a
  group's pending list cannot be known before the lease script picks the group. All of them
  share the tag, so a call touches one Cluster slot. keys.ts (DerivedKeys) lists the derived
  names too. Needs nothing.
]]

local KEYS, ARGV            -- this call's keys and arguments
local K_JOBS                -- hash  id -> record ("<meta json>\n<data json>", redis/record.lua)
local K_PENDING             -- list  ids of priority 0, FIFO (RPUSH / LPOP)
local K_PRIO                -- zset  ids with a non-zero priority, by (-priority, seq)
local K_DELAYED             -- zset  id -> due time (ms, Redis clock)
local K_WORKING             -- zset  id -> lease deadline (ms)
local K_LEASES              -- hash  id -> current lease token (the fence)
local K_DONE                -- zset  completed id -> time its retention ends
local K_RESULTS             -- hash  completed id -> {"at":ms,"r":result json or null}
local K_DEAD                -- zset  dead-lettered id -> time of death
local K_META                -- hash  queue state, below
local K_WAKE                -- list  wake-up tokens for blocked leasers (BLPOP); 'x' once deleted
local K_DEDUP               -- zset  finished custom job id -> end of its idempotency window
local K_EVENTS              -- sharded pub/sub channel of job transitions
local K_SEQ                 -- string sequence for FIFO order among prioritized jobs
local K_LISTEN              -- string present while some process listens to K_EVENTS (expires)
-- K_META fields: paused, nextDue (earliest due time in K_DELAYED), ghosts (ids dropped without
-- a record); bound, stats, glimit and cfg (settings stored, produce.lua); closed; del (the
-- tombstone of a deleted queue); g (the group rotation may be non-empty), u ('' is in the
-- rotation), gp (grouped jobs pending), np (K_PRIO is empty, adds/pending.lua); a partition's pe
-- (the latest epoch of its queue's map it heard of) and ph (the epoch that held it), and paused
-- 'h' / 'hp' while a resize holds it (partitions/fence-partition.lua).

-- derived from the tag
local K_TAG                 -- '<tag>' (from K_JOBS = '<tag>:jobs')
local K_GACTIVE             -- list  rotation: groups that may lease now, '' = ungrouped jobs
local K_GSET                -- set   the group members of gactive (never '')
local K_GWORK               -- hash  group -> its jobs leased now
local K_GROUPS              -- set   groups whose pending list is not empty
local K_WAITERS             -- zset  blocked producer id -> registration expiry (ms)
local K_NOTFULL             -- list  wake-up tokens for blocked producers (BLPOP)
local K_STATS               -- hash  pm, pb produced messages/bytes; cm, cb consumed
local K_LIMITER             -- string leases in the queue's rate-limit window; its expiry ends it (rate-limits/limiter.lua)
local K_GLIMITED            -- zset  group out of the rotation -> end of its rate-limit window (ms)
local K_PROGRESS            -- hash  id -> progress JSON its handler wrote (progress/progress.lua)
local K_LOGGED              -- hash  id -> '<n> <writer> <token>' of its last log line (progress/progress.lua)
local K_FLOWS               -- hash  parent id -> 1: parents whose flow keys exist (flows/flows.lua)
local K_FLOWWAIT            -- zset  parent id waiting for its children -> time it began waiting
local K_SCHEDS              -- hash  scheduler id -> config and job record template (schedulers/schedulers.lua)
local K_SCHED_STATE         -- hash  scheduler id -> '<version>:<next slot>:<jobs made>'
local K_SCHED_NEXT          -- zset  scheduler id -> its next slot (ms), while it has one
local K_TIES                -- zset  due time -> itself: the due times of K_DELAYED that have a tie list (adds/delayed.lua)
local K_DEADEXP             -- zset  dead id -> end of its retention, jobs with keepDead.ageMs (settles/retention.lua)
local function groupKey(g) return K_TAG .. ':g:' .. g end         -- list  a group's pending ids, FIFO
local function glimKey(g) return K_TAG .. ':glim:' .. g end      -- string a group's leases in its rate-limit window
local function roleKey(role) return K_TAG .. ':role:' .. role end -- string holder of an exclusive role
local function tieKey(due) return K_TAG .. ':tie:' .. due end    -- list  the delayed ids due at one time, in the order they came
-- deduplication ids (adds/deduplication.lua): dedupKey('ids') hash id -> '<mode><job id>' of the job
-- holding it; 'ttl' zset id taken in throttle mode -> end of its window (ms); 'next' hash id -> the
-- add kept until its running holder ends (keepLastIfActive)
local function dedupKey(kind) return K_TAG .. ':dedup' .. kind end
-- cancelled leases (management/cancel-job.lua), derived where used rather than bound here, as
-- this code is near Lua's 200 locals: K_TAG .. ':cancelled' zset token of a lease cancel() ended
-- -> until when touch answers 'cancelled' (leases/touch.lua), and K_TAG .. ':cancelwhy' hash
-- token -> the cancel's reason (when it gave one), for that answer; K_TAG .. ':cancels' sharded
-- pub/sub channel of the leases cancel() ended, for their workers; the live workers' keys
-- (workers/workers.lua workerList.keys()): ':workers' zset, ':workerinfo' hash

-- Binds the queue keys at keys[o + 1 .. o + 15] (QUEUE_KEYS order), and the keys derived from
-- their tag. begin() binds a call's own queue; a flow across queues binds each of its queues in
-- turn (flows/add-flow.lua, flows/flows.lua).
local function bindQueue(keys, o)
  K_JOBS, K_PENDING, K_PRIO, K_DELAYED, K_WORKING = keys[o + 1], keys[o + 2], keys[o + 3], keys[o + 4], keys[o + 5]
  K_LEASES, K_DONE, K_RESULTS, K_DEAD, K_META = keys[o + 6], keys[o + 7], keys[o + 8], keys[o + 9], keys[o + 10]
  K_WAKE, K_DEDUP, K_EVENTS, K_SEQ, K_LISTEN = keys[o + 11], keys[o + 12], keys[o + 13], keys[o + 14], keys[o + 15]
  local tag = string.sub(K_JOBS, 1, #K_JOBS - 5)
  if tag ~= K_TAG then
    -- derived from the tag alone, so kept while calls stay on one queue (a worker's usually do)
    K_TAG = tag
    K_GACTIVE, K_GSET, K_GWORK = tag .. ':gactive', tag .. ':gset', tag .. ':gwork'
    K_GROUPS, K_WAITERS, K_NOTFULL, K_STATS = tag .. ':groups', tag .. ':waiters', tag .. ':notfull', tag .. ':stats'
    K_LIMITER, K_GLIMITED = tag .. ':limiter', tag .. ':glimited'
    K_PROGRESS, K_LOGGED = tag .. ':progress', tag .. ':logged'
    K_FLOWS, K_FLOWWAIT = tag .. ':flows', tag .. ':flowwait'
    K_SCHEDS, K_SCHED_STATE, K_SCHED_NEXT = tag .. ':scheds', tag .. ':schedstate', tag .. ':schednext'
    K_TIES, K_DEADEXP = tag .. ':ties', tag .. ':deadexp'
  end
end

local bindTag, expandKeys
do
-- the queue keys' names, in QUEUE_KEYS order (in this block: the shared code is near Lua's 200 locals)
local QUEUE_KEY_NAMES = { 'jobs', 'pending', 'prio', 'delayed', 'working', 'leases', 'done', 'results', 'dead', 'meta', 'wake', 'dedup', 'events', 'seq', 'listeners' }
-- A call on one queue passes its jobs key, then the extra keys of its operation: the other
-- queue keys follow from the tag. Passing 15 keys a call cost the client their encoding and
-- the server a string and a table slot each, on every lease and settle. The full layout is
-- built once per queue (a worker's calls stay on one) and reused; the extras go after it.
local full, fullJobs, fullLen = {}, nil, 15
function expandKeys(keys)
  local jobs = keys[1]
  if jobs ~= fullJobs then
    local tag = string.sub(jobs, 1, #jobs - 5)
    for i, name in ipairs(QUEUE_KEY_NAMES) do full[i] = tag .. ':' .. name end
    fullJobs = jobs
  end
  local n = #keys
  for i = 2, n do full[14 + i] = keys[i] end
  for i = 15 + n, fullLen do full[i] = nil end
  fullLen = 14 + n
  return full
end

-- Binds the queue whose tag is `tag` (a flow parent's, in another queue of the same slot).
function bindTag(tag)
  local keys = {}
  for i, name in ipairs(QUEUE_KEY_NAMES) do keys[i] = tag .. ':' .. name end
  bindQueue(keys, 0)
end
end -- of the block
