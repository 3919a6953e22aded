--[[
  The start of every call. A function library is loaded once and its upvalues outlive a
  call, so begin() binds this call's keys and arguments and resets every piece of per-call
  state: nothing may carry over from the last call but the keys derived from its tag, which
  depend on the tag alone. Needs the includes that declare that
  state: redis/keys.lua, events/events.lua, leases/wake.lua, groups/groups.lua,
  settles/retention.lua.
]]

local function begin(keys, args)
  KEYS, ARGV = keys, args
  K_JOBS, K_PENDING, K_PRIO, K_DELAYED, K_WORKING = keys[1], keys[2], keys[3], keys[4], keys[5]
  K_LEASES, K_DONE, K_RESULTS, K_DEAD, K_META = keys[6], keys[7], keys[8], keys[9], keys[10]
  K_WAKE, K_DEDUP, K_EVENTS, K_SEQ, K_LISTEN = keys[11], keys[12], keys[13], keys[14], keys[15]
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
  events, eventsArg, listening = {}, false, nil -- events/events.lua
  wakeNeeded = false                             -- leases/wake.lua
  glimitCache, gFlagSet = nil, false             -- groups/groups.lua
  limitedUntil = nil                             -- rate-limits/limiter.lua
  notesFlag, droppedIds = nil, nil               -- progress/progress.lua
  doneMost, doneBudget, deadMost, deadBudget, deadDrop = nil, nil, nil, nil, nil -- settles/retention.lua
end
