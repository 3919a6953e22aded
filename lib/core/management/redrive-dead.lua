--[[
  Redrives dead letters (lib/core/management/inspector.ts deadOp()): back to pending with a
  fresh attempt budget; the failure history stays (management/retried.lua).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      limit: the oldest this many dead letters that pass the filter; or 'ids' to name them
    ARGV[3..]    target: with 'ids', the ids; else the filter: olderThanMs, then 'n<name>'
                 (management/dead-targets.lua)

  Cost: O(log D + limit) for D dead letters, ids: O(ids); with a name, every dead letter old
  enough is examined until `limit` match: O(log D + examined).

  Output:
    the ids moved to pending; one whose record cannot be decoded stays dead (with a new time
    of death) and is left out

  Events:
    retried (reason 'redrive')
]]
eventsArg = ARGV[1] == '1'
local ids = deadTargets(2)
if #ids == 0 then return {} end
unDead(ids) -- management/remove.lua
local recs = hmgetMany(K_JOBS, ids)
local moved = {}
for i, id in ipairs(ids) do
  local meta, data = decodeMeta(recs[i] or '')
  if meta then
    retryFinished(id, meta, data, 'redrive') -- management/retried.lua
    moved[#moved + 1] = id
  else
    redis.call('ZADD', K_DEAD, nowMs(), id) -- cannot run: stays dead
  end
end
flushWake()
flushEvents()
return moved
