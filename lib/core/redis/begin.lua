--[[
  The start of every call. A function library is loaded once and its upvalues outlive a
  call, so begin() binds this call's keys and arguments and resets every piece of per-call
  state: nothing may carry over from the last call but the keys derived from its tag, which
  depend on the tag alone. Needs the includes that declare that
  state: redis/keys.lua, events/events.lua, leases/wake.lua, groups/groups.lua,
  adds/pending.lua, settles/retention.lua, flows/flows.lua.
]]

-- `short`: an operation on one queue, passed its jobs key and its extras (redis/keys.lua expandKeys).
local function begin(keys, args, short)
  if short then keys = expandKeys(keys) end
  KEYS, ARGV = keys, args
  bindQueue(keys, 0) -- redis/keys.lua
  events, eventsArg, listening = {}, false, nil -- events/events.lua
  wakeNeeded = false                             -- leases/wake.lua
  glimitCache, gFlagSet = nil, false             -- groups/groups.lua
  noPrio = nil                                   -- adds/pending.lua
  groupOverrides.on = nil                        -- groups/groups.lua
  limitedUntil = nil                             -- rate-limits/limiter.lua
  notesFlag, droppedIds = nil, nil               -- progress/progress.lua
  doneMost, doneBudget, deadMost, deadBudget, deadDrop = nil, nil, nil, nil, nil -- settles/retention.lua
  homeQueue = nil                                -- flows/flows.lua
end
