--[[
  The ungrouped pending jobs: K_PENDING holds priority 0 in FIFO order, K_PRIO the others
  by (-priority, sequence), so that priority > 0 leases before the list and priority < 0
  after it (a lifo job of priority p sorts before the others of p). pushPending() also routes
  grouped ids to their group. Needs redis/keys.lua,
  redis/calls.lua, leases/wake.lua, groups/groups.lua.
]]

local PRIO_SPAN = 4398046511104 -- 2^42: FIFO sequence space within one priority

-- Meta np: set by a take that found K_PRIO empty (and jobs in K_PENDING), deleted by every
-- add to K_PRIO (pushPending is the one place that adds). While it is set, a take skips its
-- look at K_PRIO: one command less per lease call in the many queues that never use
-- priorities. A queue without the field (new, or written by an older version) is looked at,
-- so a missing mark costs a command, never a job. noPrio is this call's knowledge of it: true
-- set, false not set, nil not read (reset by begin(); the lease call reads it with its meta
-- flags).
local noPrio

-- Makes ids leasable. Priority-0 ids go to the list in one RPUSH. groups[i] (optional):
-- the job's group, whose own list it joins instead. `head` (the lifo add option): each id
-- goes before the jobs of its priority or group instead of after them, the last one first.
local function pushPending(ids, priorities, groups, head)
  local plain = {}
  for i, id in ipairs(ids) do
    local p = priorities[i] or 0
    if groups and groups[i] then
      pushGroup(groups[i], { id }, head)
    elseif p == 0 then
      plain[#plain + 1] = id
    else
      if noPrio ~= false then
        redis.call('HDEL', K_META, 'np')
        noPrio = false
      end
      local seq = redis.call('INCR', K_SEQ) % PRIO_SPAN
      -- At the head: -seq sorts before every job of its priority (-p·SPAN + seq) and after
      -- the next priority's (-(p+1)·SPAN + seq) while the sequence is under SPAN / 2.
      redis.call('ZADD', K_PRIO, -p * PRIO_SPAN + (head and -seq or seq), id)
      wakeNeeded = true
    end
  end
  if #plain > 0 then
    local len = callMany(head and 'LPUSH' or 'RPUSH', K_PENDING, plain)
    if len == #plain then wakeNeeded = true end
  end
end

-- Takes up to `count` ungrouped ids: priority > 0 first, then the FIFO list, then priority < 0.
local function takeUngrouped(count)
  if count < 1 then return {} end -- ZRANGE 0 -1 would be the whole set
  if noPrio then return redis.call('LPOP', K_PENDING, int(count)) or {} end
  local head = redis.call('ZRANGE', K_PRIO, '0', int(count - 1), 'WITHSCORES')
  if #head == 0 then
    -- no prioritized job (the usual case): the list's reply is the answer
    local popped = redis.call('LPOP', K_PENDING, int(count))
    if not popped then return {} end
    -- marked by a take that found work only: an idle worker writes nothing
    if noPrio == false then
      redis.call('HSET', K_META, 'np', '1')
      noPrio = true
    end
    return popped
  end
  local taken, fromPrio, low = {}, {}, {}
  for i = 1, #head, 2 do
    if tonumber(head[i + 1]) < 0 then
      taken[#taken + 1] = head[i]
      fromPrio[#fromPrio + 1] = head[i]
    else
      low[#low + 1] = head[i]
    end
  end
  local need = count - #taken
  if need > 0 then
    local popped = redis.call('LPOP', K_PENDING, int(need))
    if popped then
      for _, id in ipairs(popped) do taken[#taken + 1] = id end
      need = count - #taken
    end
  end
  local i = 1
  while need > 0 and low[i] do
    taken[#taken + 1] = low[i]
    fromPrio[#fromPrio + 1] = low[i]
    need = need - 1
    i = i + 1
  end
  if #fromPrio > 0 then callMany('ZREM', K_PRIO, fromPrio) end
  return taken
end

local function ungroupedPending()
  return redis.call('LLEN', K_PENDING) > 0 or (not noPrio and redis.call('ZCARD', K_PRIO) > 0)
end
