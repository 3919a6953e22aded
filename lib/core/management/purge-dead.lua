--[[
  Purges dead letters (lib/core/management/inspector.ts deadOp()): deleted for good.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      cleaned: '1' when clean('dead') purges (a 'cleaned' event), '0' for purgeDead
    ARGV[3]      limit: the oldest this many dead letters that pass the filter; or 'ids' to name them
    ARGV[4..]    target: with 'ids', the ids; else the filter: olderThanMs, then 'n<name>'
                 (management/dead-targets.lua)

  Cost: O(log D + limit) for D dead letters, ids: O(ids); with a name, every dead letter old
  enough is examined until `limit` match: O(log D + examined).

  Output:
    the ids removed

  Events:
    removed (each job); with cleaned '1', cleaned (once, with the count and state 'dead',
    also when none)
]]
eventsArg = ARGV[1] == '1'
local ids = deadTargets(3)
if #ids > 0 then
  forgetDead(ids) -- management/remove.lua
  for _, id in ipairs(ids) do emit({ type = 'removed', id = id }) end
end
if ARGV[2] == '1' then emit({ type = 'cleaned', state = 'dead', count = #ids }) end
flushWake()
flushEvents()
return ids
