--[[
  Wake-ups of blocked leasers. A leaser with nothing to lease blocks on K_WAKE (BLPOP). A
  call after which it must look again (a job became leasable, the next due time moved
  earlier, the queue was closed and drained) sets wakeNeeded, and flushWake() pushes one
  token at its end. A leaser that leaves work behind wakes the next; one that was not woken
  does so only when no token waits, so a token lost with a dead consumer or a cut reply
  does not leave the others asleep (include/lease-jobs.lua). Needs include/keys.lua.
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
