--[[
  Ends a resize's handover in the map (lib/core/partitions/resize.ts), once every new
  partition leases: the map no longer holds them. Idempotent, and only for the epoch the
  handover began (a later resize's is not ended by a late call).

  Input:
    KEYS[1]      the map (partition-map.lua)

    ARGV[1]      epoch: the epoch the handover began

  Output:
    1 ended now, 0 already ended or another epoch's
]]
if redis.call('HGET', KEYS[1], 'epoch') ~= ARGV[1] then return 0 end
return redis.call('HDEL', KEYS[1], 'hold')
