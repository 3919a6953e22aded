--[[
  One page of the jobs in one or more states (lib/core/management/management.ts getJobs()):
  positions over the states in the order given, each state's jobs in the order asked for.
  Read-only: it still runs when Redis refuses writes.

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
  A state after the page's end is not read.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      states: comma-separated, each once (checked by the client): 'pending' |
                 'delayed' | 'working' | 'completed' | 'dead' | 'waiting-children'
    ARGV[2]      start: first position of the page (0-based, in the order asked for)
    ARGV[3]      end: last position (inclusive)
    ARGV[4]      order: 'asc' | 'desc'

  Output:
    per state, in the order given: n, then its n jobs of the page in the order asked for, 5
    fields each, as get-job.lua answers them: id, record ('' when gone), score (the lease
    deadline, due time, end of retention or time of death, a bulk string; '' for pending),
    result ('{"at":ms,"d":ms,"r":json or null}' for a completed job that kept one, else ''),
    started (a working job's lease start, redis/lease-token.lua; else '')
]]
local states, first, last, order = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3]), ARGV[4]

-- A state's jobs as segments in ascending order (a list, or a range of ranks of a zset), and
-- how many in all.
local function segmentsOf(state)
  local segments, total = {}, 0
  local function add(s)
    if s.size > 0 then
      segments[#segments + 1] = s
      total = total + s.size
    end
  end
  local function zsetSegment(key, from, to) -- ranks from..to (inclusive)
    add({ key = key, zset = true, from = from, size = to - from + 1 })
  end
  if state == 'pending' then
    local card = redis.call('ZCARD', K_PRIO)
    local high = redis.call('ZCOUNT', K_PRIO, '-inf', '(0') -- priority > 0
    zsetSegment(K_PRIO, 0, high - 1)
    add({ key = K_PENDING, size = redis.call('LLEN', K_PENDING) })
    zsetSegment(K_PRIO, high, card - 1)
    local groups = redis.call('SMEMBERS', K_GROUPS)
    table.sort(groups)
    for _, g in ipairs(groups) do add({ key = groupKey(g), size = redis.call('LLEN', groupKey(g)) }) end
  else
    local key = ({ delayed = K_DELAYED, working = K_WORKING, completed = K_DONE, dead = K_DEAD, ['waiting-children'] = K_FLOWWAIT })[state]
    local from = 0
    if state == 'completed' then from = redis.call('ZCOUNT', K_DONE, '-inf', nowMs()) end -- retention over
    zsetSegment(key, from, redis.call('ZCARD', key) - 1)
  end
  return segments, total
end

-- The ids at ascending positions a..b of `segments`, with their scores ('' for pending).
local function idsAt(segments, a, b, pending)
  local ids, scores = {}, {}
  local offset = 0
  for _, s in ipairs(segments) do
    local from, to = math.max(a - offset, 0), math.min(b - offset, s.size - 1)
    if from <= to then
      if s.zset then
        local r = redis.call('ZRANGE', s.key, s.from + from, s.from + to, 'WITHSCORES')
        for i = 1, #r, 2 do
          ids[#ids + 1] = r[i]
          scores[#ids] = pending and '' or r[i + 1]
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
  return ids, scores
end

local out = {}
local before = 0 -- positions of the page's order taken by the states before this one
for state in string.gmatch(states, '[^,]+') do
  local countAt = #out + 1
  out[countAt] = 0
  if before <= last then
    local segments, total = segmentsOf(state)
    -- this state's part of the page, as positions within its own jobs in the order asked for
    local from, to = math.max(first - before, 0), math.min(last - before, total - 1)
    if from <= to then
      local a, b = from, to
      if order == 'desc' then a, b = total - 1 - to, total - 1 - from end
      local ids, scores = idsAt(segments, a, b, state == 'pending')
      local recs = hmgetMany(K_JOBS, ids)
      local results = state == 'completed' and hmgetMany(K_RESULTS, ids) or {}
      local tokens = state == 'working' and hmgetMany(K_LEASES, ids) or {}
      local n = #ids
      for j = 1, n do
        local i = order == 'desc' and n + 1 - j or j
        out[#out + 1] = ids[i]
        out[#out + 1] = recs[i] or ''
        out[#out + 1] = scores[i]
        out[#out + 1] = results[i] or ''
        out[#out + 1] = tokens[i] and leaseStart(tokens[i]) or ''
      end
      out[countAt] = n
    end
    before = before + total
  end
end
return out
