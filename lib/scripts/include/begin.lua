--[[
  The start of every call. A function library is loaded once and its upvalues outlive a
  call, so begin() binds this call's keys and arguments and resets every piece of per-call
  state: nothing may carry over from the last call. Needs the includes that declare that
  state: include/keys.lua, include/events.lua, include/wake.lua, include/groups.lua.
]]

local function begin(keys, args)
  KEYS, ARGV = keys, args
  K_JOBS, K_PENDING, K_PRIO, K_DELAYED, K_WORKING = keys[1], keys[2], keys[3], keys[4], keys[5]
  K_LEASES, K_DONE, K_RESULTS, K_DEAD, K_META = keys[6], keys[7], keys[8], keys[9], keys[10]
  K_WAKE, K_DEDUP, K_EVENTS, K_SEQ, K_LISTEN = keys[11], keys[12], keys[13], keys[14], keys[15]
  K_TAG = string.sub(K_JOBS, 1, #K_JOBS - 5)
  K_GACTIVE, K_GSET, K_GWORK = K_TAG .. ':gactive', K_TAG .. ':gset', K_TAG .. ':gwork'
  K_GROUPS, K_WAITERS, K_NOTFULL, K_STATS = K_TAG .. ':groups', K_TAG .. ':waiters', K_TAG .. ':notfull', K_TAG .. ':stats'
  K_LIMITER, K_GLIMITED = K_TAG .. ':limiter', K_TAG .. ':glimited'
  K_PROGRESS, K_LOGGED = K_TAG .. ':progress', K_TAG .. ':logged'
  K_FLOWS, K_FLOWWAIT = K_TAG .. ':flows', K_TAG .. ':flowwait'
  K_SCHEDS, K_SCHED_STATE, K_SCHED_NEXT = K_TAG .. ':scheds', K_TAG .. ':schedstate', K_TAG .. ':schednext'
  events, eventsArg, listening = {}, false, nil -- include/events.lua
  wakeNeeded = false                             -- include/wake.lua
  glimitCache, gFlagSet = nil, false             -- include/groups.lua
  limitedUntil = nil                             -- include/limiter.lua
  notesFlag, droppedIds = nil, {}                -- include/progress.lua
end
