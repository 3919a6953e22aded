--[[
  The fence of a partitioned queue's adds (docs/scale-out.md "Changing the number of
  partitions"): a partition's producer sends the epoch of the map it routed with after its
  events flag ('1:7'); a partition that a resize told of a later epoch (meta pe,
  partitions/fence-partition.lua) refuses the add, so no job of a key that moved lands where
  the key was. A plain queue's flag is one character and reads nothing.
]]

-- True when the add's flag carries an epoch older than the partition's `pe` (nil: none seen).
local function movedSince(flag, pe)
  if #flag < 3 or not pe then return false end
  return tonumber(string.sub(flag, 3)) < tonumber(pe)
end
