--[[
  Job events. They are collected during a call and published once, as one JSON array on
  K_EVENTS, when the caller asked for them (ARGV[1] of the operations that publish) and
  some process listens: nobody subscribed, no encoding and no SPUBLISH. Listeners keep
  K_LISTEN alive (lib/core/events/event-hub.ts). Needs redis/keys.lua.
]]

local events      -- per call (reset by begin()): the events of this call
local eventsArg   -- per call: ARGV[1] == '1', set by each operation that publishes
local listening   -- per call: nil until eventsOn() has looked
local function eventsOn()
  if listening == nil then listening = eventsArg and redis.call('EXISTS', K_LISTEN) == 1 end
  return listening
end
-- Keeps `ev` while someone listens. A caller that emits once per job (add, ack) checks
-- eventsOn() before building the table: a table per job costs more than the check.
local function emit(ev)
  if eventsOn() then events[#events + 1] = ev end
end
local function flushEvents()
  if #events > 0 then
    redis.call('SPUBLISH', K_EVENTS, cjson.encode(events))
  end
end
