--[[
  Per-state counts, read atomically (lib/core/management/inspector.ts counts()). Read-only: it
  still runs when Redis refuses writes.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)
    ARGV[1]      withAge: '1' to add oldestAgeMs (relq/metrics), else absent

  Output:
    { pending, working, delayed, completed, dead, paused, ghosts, limitedMs, limitedGroups }
      pending    ungrouped (list + prioritized) and grouped (meta gp)
      completed  jobs whose retention has not ended: those past it are not counted, whether
                 or not a sweep removed them yet
      paused     1 paused, 0 not
      ghosts     ids dropped by lease calls because their record was gone (meta ghosts)
      limitedMs  how long the queue's rate-limit window stays spent (0: it is open)
      limitedGroups  groups out of the rotation until their rate-limit window ends
      waitingChildren  parents waiting for their children (after limitedGroups)
      oldestAgeMs  with ARGV[1] '1' only (after waitingChildren): age (Redis clock minus
                 created at) of the oldest job at a head of the pending structures: the FIFO
                 list, both ends of the prioritized set, the first 16 groups of the rotation;
                 -1 when none waits
      schedulers, schedulersOverdue  the last two (lib/core/schedulers/schedulers.ts)
]]
local limitedMs = 0
local rl = redis.call('HGET', K_META, 'rl')
if rl then
  local max = tonumber(string.match(rl, '^(%d+):'))
  local used = tonumber(redis.call('GET', K_LIMITER)) or 0
  if used >= (max > 0 and max or HELD) then limitedMs = math.max(redis.call('PTTL', K_LIMITER), 0) end
end
-- Heads only: a bounded number of reads, whatever the queue's length.
local function oldestPendingAge()
  local oldest
  local function consider(id)
    local rec = id and redis.call('HGET', K_JOBS, id)
    local t = rec and metaInt(rec, 't')
    if t and (not oldest or t < oldest) then oldest = t end
  end
  consider(redis.call('LINDEX', K_PENDING, 0))
  consider(redis.call('ZRANGE', K_PRIO, 0, 0)[1])
  consider(redis.call('ZRANGE', K_PRIO, -1, -1)[1])
  for _, g in ipairs(redis.call('LRANGE', K_GACTIVE, 0, 15)) do
    if g ~= '' then consider(redis.call('LINDEX', groupKey(g), 0)) end
  end
  return oldest and math.max(nowMs() - oldest, 0) or -1
end
local out = {
  redis.call('LLEN', K_PENDING) + redis.call('ZCARD', K_PRIO) + (tonumber(redis.call('HGET', K_META, 'gp')) or 0),
  redis.call('ZCARD', K_WORKING),
  redis.call('ZCARD', K_DELAYED),
  redis.call('ZCOUNT', K_DONE, '(' .. nowMs(), '+inf'),
  redis.call('ZCARD', K_DEAD),
  redis.call('HEXISTS', K_META, 'paused'),
  tonumber(redis.call('HGET', K_META, 'ghosts')) or 0,
  limitedMs,
  redis.call('ZCOUNT', K_GLIMITED, '(' .. nowMs(), '+inf'),
  redis.call('ZCARD', K_FLOWWAIT), -- parents waiting for their children (flows/flows.lua)
}
if ARGV[1] == '1' then out[#out + 1] = oldestPendingAge() end
-- schedulers, last (inspector.ts reads them from the end): how many, and how many overdue
-- (a next slot passed over 5 s ago that no tick moved on, schedulers/schedulers.lua)
out[#out + 1] = redis.call('HLEN', K_SCHEDS)
out[#out + 1] = redis.call('ZCOUNT', K_SCHED_NEXT, '-inf', nowMs() - 5000)
return out
