--[[
  Wake-ups of blocked leasers. A leaser with nothing to lease blocks on K_WAKE (BLPOP). A
  call after which it must look again (a job became leasable, the next due time moved
  earlier, the queue was closed and drained) sets wakeNeeded, and flushWake() pushes one
  token at its end. A woken leaser that leaves work behind wakes the next
  (include/lease-jobs.lua). A token lost with a consumer that died before leasing, or with a
  reply cut off, is made up for by the worker: a cut wait leases at once, and an idle wait
  that times out checks whether jobs are pending (lib/core/worker/worker.ts). Needs
  include/keys.lua.
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
