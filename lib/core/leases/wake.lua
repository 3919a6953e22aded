--[[
  Wake-ups of blocked leasers. A leaser with nothing to lease blocks on K_WAKE (BLPOP). A
  call after which it must look again (a job became leasable, the next due time moved
  earlier, the queue was closed and drained) sets wakeNeeded, and flushWake() pushes one
  token at its end. A woken leaser that leaves work behind wakes the next
  (leases/lease-jobs.lua). A token lost with a reply cut off is made up for by its worker: a
  cut wait leases at once (lib/core/leases/leasing.ts). One lost with a consumer that died
  before leasing is made up for by the next sweep (sweep.lua), and by the idle workers' safety
  lease without one. Needs redis/keys.lua.
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
