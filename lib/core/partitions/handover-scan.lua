--[[
  One step of a resize's look at a partition that gave keys away (lib/core/partitions/
  resize.ts): whether it still holds an unfinished job (not completed, not dead) of a bucket
  that moved. A job routed by its group or partitionKey carries its bucket in its record (bk,
  redis/record.ts); jobs routed otherwise have no order to keep. Stops at the first one found.
  Reads only.

  Input:
    KEYS[1..15]  the partition's queue keys (redis/keys.lua)

    ARGV[1]      cursor: where this pass is (HSCAN of K_JOBS), '0' to start one
    ARGV[2]      count: records looked at per step, about
    ARGV[3]      moved: one character per bucket, '1' for a bucket that moved

  Output:
    { next cursor ('0': the pass ended), 1 when this step found an unfinished job of a moved bucket, else 0 }
]]
local scan = redis.call('HSCAN', K_JOBS, ARGV[1], 'COUNT', ARGV[2])
local moved = ARGV[3]
local items = scan[2]
for k = 1, #items, 2 do
  local bk = metaInt(items[k + 1], 'bk')
  if bk and string.byte(moved, bk + 1) == 49
      and not redis.call('ZSCORE', K_DONE, items[k]) and not redis.call('ZSCORE', K_DEAD, items[k]) then
    return { scan[1], 1 }
  end
end
return { scan[1], 0 }
