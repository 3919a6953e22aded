--[[
  Fair groups (docs/bounded-fair-batch.md). A grouped job waits in its group's own list
  (groupKey); K_GACTIVE is the rotation of groups that may lease now, which takeFair
  (leases/lease-jobs.lua) serves one job per turn. A group at its concurrency limit (meta
  glimit) leaves the rotation until one of its leases ends (settles/ended.lua). Needs
  redis/keys.lua, redis/calls.lua, leases/wake.lua.
]]

local glimitCache  -- per call (reset by begin()): meta glimit (0 none), set by whoever reads it
local gFlagSet     -- per call: meta g was set by this call

local function groupLimit()
  if glimitCache == nil then glimitCache = tonumber(redis.call('HGET', K_META, 'glimit')) or 0 end
  return glimitCache
end

local function activateGroup(g)
  if redis.call('SADD', K_GSET, g) == 1 then
    redis.call('RPUSH', K_GACTIVE, g)
    if not gFlagSet then
      redis.call('HSET', K_META, 'g', '1')
      gFlagSet = true
    end
    wakeNeeded = true
  end
end

-- Makes ids of group g leasable (FIFO within the group; `head`: before its other jobs).
local function pushGroup(g, ids, head)
  local len = callMany(head and 'LPUSH' or 'RPUSH', groupKey(g), ids)
  redis.call('HINCRBY', K_META, 'gp', #ids)
  if len == #ids then redis.call('SADD', K_GROUPS, g) end
  local lim = groupLimit()
  if lim == 0 or (tonumber(redis.call('HGET', K_GWORK, g)) or 0) < lim then activateGroup(g) end
end
