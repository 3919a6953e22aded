--[[
  Wake-ups of blocked leasers. A leaser with nothing to lease blocks on K_WAKE (BLPOP). A
  call after which it must look again (a job became leasable, the next due time moved
  earlier, the queue was closed and drained) sets wakeNeeded, and flushWake() pushes one
  token at its end. A woken leaser that leaves work behind wakes the next
  (include/lease-jobs.lua). Needs include/keys.lua.
]]

local wakeNeeded  -- per call (reset by begin())
local function flushWake()
  if wakeNeeded then
    -- capped: tokens pile up while no leaser waits
    if redis.call('RPUSH', K_WAKE, '1') > 16 then
      redis.call('LTRIM', K_WAKE, 0, 15)
    end
  end
end
