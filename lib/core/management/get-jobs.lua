--[[
  One page of the jobs in one state (lib/core/management/management.ts getJobs()). Read-only: it
  still runs when Redis refuses writes.

  Order ('asc'; 'desc' is its reverse):
    pending    lease order of the ungrouped jobs (priority > 0 highest first, then priority 0
               FIFO, then priority < 0), then the grouped jobs, group by group in name order,
               each FIFO (leasing itself rotates over the groups)
    delayed    by due time
    working    by lease deadline
    completed  by end of retention; those past it are left out, whether or not a sweep
               removed them yet
    dead       by time of death
    waiting-children  parents waiting for their children, by the time they began (docs/flows.md)
  Cost: O(log N + M) for a page of M jobs of the sorted states; for pending, O(start + M) in
  the lists (LRANGE walks from the nearer end) plus O(G log G) for G groups with pending jobs.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      state: 'pending' | 'delayed' | 'working' | 'completed' | 'dead' | 'waiting-children'
    ARGV[2]      start: first position of the page (0-based, in the order asked for)
    ARGV[3]      end: last position (inclusive)
    ARGV[4]      order: 'asc' | 'desc'

  Output:
    { id, record ('' when gone), score, result, ... } in the order asked for, 4 fields per job,
    as get-job.lua answers them: score the lease deadline, due time, end of retention or time
    of death (a bulk string; '' for pending), result ('{"at":ms,"r":json or null}' for a
    completed job that kept one, else '')
]]
local state, first, last, order = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]

-- The state's jobs as segments in ascending order: a list, or a range of ranks of a zset.
local segments = {}
local function zsetSegment(key, from, to) -- ranks from..to (inclusive)
  if to >= from then segments[#segments + 1] = { key = key, zset = true, from = from, size = to - from + 1 } end
end
if state == 'pending' then
  local card = redis.call('ZCARD', K_PRIO)
  local high = redis.call('ZCOUNT', K_PRIO, '-inf', '(0') -- priority > 0
  zsetSegment(K_PRIO, 0, high - 1)
  segments[#segments + 1] = { key = K_PENDING, size = redis.call('LLEN', K_PENDING) }
  zsetSegment(K_PRIO, high, card - 1)
  local groups = redis.call('SMEMBERS', K_GROUPS)
  table.sort(groups)
  for _, g in ipairs(groups) do
    segments[#segments + 1] = { key = groupKey(g), size = redis.call('LLEN', groupKey(g)) }
  end
else
  local key = ({ delayed = K_DELAYED, working = K_WORKING, completed = K_DONE, dead = K_DEAD, ['waiting-children'] = K_FLOWWAIT })[state]
  local from = 0
  if state == 'completed' then from = redis.call('ZCOUNT', K_DONE, '-inf', nowMs()) end -- retention over
  zsetSegment(key, from, redis.call('ZCARD', key) - 1)
end

local total = 0
for _, s in ipairs(segments) do total = total + s.size end
-- the page as ascending positions
local a, b = first, last
if order == 'desc' then a, b = total - 1 - last, total - 1 - first end
a, b = math.max(a, 0), math.min(b, total - 1)
if a > b then return {} end

local ids, scores = {}, {}
local offset = 0
for _, s in ipairs(segments) do
  local from, to = math.max(a - offset, 0), math.min(b - offset, s.size - 1)
  if from <= to then
    if s.zset then
      local r = redis.call('ZRANGE', s.key, s.from + from, s.from + to, 'WITHSCORES')
      for i = 1, #r, 2 do
        ids[#ids + 1] = r[i]
        scores[#ids] = state == 'pending' and '' or r[i + 1]
      end
    else
      for _, id in ipairs(redis.call('LRANGE', s.key, from, to)) do
        ids[#ids + 1] = id
        scores[#ids] = ''
      end
    end
  end
  offset = offset + s.size
  if offset > b then break end
end

local recs = hmgetMany(K_JOBS, ids)
local results = state == 'completed' and hmgetMany(K_RESULTS, ids) or {}
local out = {}
local n = #ids
for j = 1, n do
  local i = order == 'desc' and n + 1 - j or j
  out[#out + 1] = ids[i]
  out[#out + 1] = recs[i] or ''
  out[#out + 1] = scores[i]
  out[#out + 1] = results[i] or ''
end
return out
