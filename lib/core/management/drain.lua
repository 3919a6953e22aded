--[[
  Removes every waiting job: pending (ungrouped, prioritized and every group's), delayed,
  and parents waiting for their children (lib/core/management/management.ts drain()). Leased
  jobs stay and settle as usual (a leased child of a drained parent tells no one); completed
  and dead ones stay. The group rotation is emptied with the groups' lists (groups with
  leased jobs keep their count and rejoin when they get jobs again). In a bounded queue the
  freed slots wake blocked producers; a closed queue left without unfinished jobs wakes a
  blocked consumer, which then sees it drained. One atomic call: no job added before it is
  left waiting, so no parent runs without a child that was drained. Cost: O(P + D + W) for
  P pending, D delayed and W waiting parents (Redis serves nothing else meanwhile: about a
  second per million jobs).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not

  Output:
    the number of jobs removed

  Events:
    removed (each job)
]]
eventsArg = ARGV[1] == '1'
local before = redis.call('HLEN', K_JOBS)
local lists = { K_PENDING }
for _, g in ipairs(redis.call('SMEMBERS', K_GROUPS)) do lists[#lists + 1] = groupKey(g) end
local ids = {}
local function take(found)
  for _, id in ipairs(found) do ids[#ids + 1] = id end
end
for _, key in ipairs(lists) do take(redis.call('LRANGE', key, 0, -1)) end
take(redis.call('ZRANGE', K_PRIO, 0, -1))
take(redis.call('ZRANGE', K_DELAYED, 0, -1))
take(redis.call('ZRANGE', K_FLOWWAIT, 0, -1)) -- their keys go in flowJobsGone (flows/flows.lua)
if #ids == 0 then return 0 end

lists[#lists + 1] = K_PRIO
lists[#lists + 1] = K_DELAYED
for _, d in ipairs(redis.call('ZRANGE', K_TIES, 0, -1)) do lists[#lists + 1] = tieKey(d) end -- adds/delayed.lua
lists[#lists + 1] = K_TIES
for _, k in ipairs({ K_GROUPS, K_GACTIVE, K_GSET }) do lists[#lists + 1] = k end
for i = 1, #lists, 1000 do redis.call('DEL', unpack(lists, i, math.min(i + 999, #lists))) end
redis.call('HDEL', K_META, 'gp', 'g', 'u', 'nextDue')
flowJobsGone(ids) -- flows/flows.lua
dedupIds.drained(ids) -- the deduplication ids they held are free (adds/deduplication.lua)
callMany('HDEL', K_JOBS, ids)
forgetProgress(ids) -- a retried job keeps its progress and lines (progress/progress.lua)
for _, id in ipairs(ids) do emit({ type = 'removed', id = id }) end

local ended = endedLeases()
ended.freed = before - redis.call('HLEN', K_JOBS) -- ids without a record (ghosts) freed nothing
flushRemoved(ended)
flushWake()
flushEvents()
return ended.freed
