--[[
  Wake-ups of blocked leasers. A leaser with nothing to lease blocks on K_WAKE (BLPOP). A
  call after which it must look again (a job became leasable, the next due time moved
  earlier, the queue was closed and drained) sets wakeNeeded, and flushWake() pushes one
  token at its end. A woken leaser that leaves work behind wakes the next
  (leases/lease-jobs.lua). A token lost with a reply cut off is made up for by its worker: a
  cut wait leases at once (lib/core/leases/leasing.ts). One lost with a consumer that died
  before leasing is made up for by the next sweep (sweep.lua), and by the idle workers' safety
  lease without one. A partition of a partitioned queue has no blocked leaser: its workers wait
  on all of the queue's partitions at once, which a blocking pop cannot do on a Cluster, so the
  token goes to its sharded pub/sub channel '<tag>:wakes' instead (lib/core/partitions/). Needs
  redis/keys.lua.
]]

local wakeNeeded  -- per call (reset by begin())
-- the tag of the last queue woken, and its wake channel when it is a partition (else false)
local wakeTag, wakeChannel
local function flushWake()
  if wakeNeeded then
    if K_TAG ~= wakeTag then
      wakeTag = K_TAG
      -- a partition's tag is '{<prefix>:{<name>#<i>}' (partitions/layout.ts); no plain queue's
      -- has a '{' right after its prefix (redis/keys.ts queueTag)
      wakeChannel = string.find(K_TAG, '^{[^:{}]*:{') and (K_TAG .. ':wakes') or false
    end
    if wakeChannel then
      redis.call('SPUBLISH', wakeChannel, '1')
    elseif redis.call('RPUSH', K_WAKE, '1') > 16 then
      -- capped: tokens pile up while no leaser waits
      redis.call('LTRIM', K_WAKE, 0, 15)
    end
  end
end
