--[[
  Fair groups (docs/bounded-fair-batch.md). A grouped job waits in its group's own list
  (groupKey); K_GACTIVE is the rotation of groups that may lease now, which takeFair
  (leases/lease-jobs.lua) serves one job per turn. A group at its concurrency limit (meta
  glimit, or its own override) leaves the rotation until one of its leases ends
  (settles/ended.lua). Needs
  redis/keys.lua, redis/calls.lua, leases/wake.lua.
]]

local glimitCache  -- per call (reset by begin()): meta glimit (0 none), set by whoever reads it
local gFlagSet     -- per call: meta g was set by this call

local function groupLimit()
  if glimitCache == nil then glimitCache = tonumber(redis.call('HGET', K_META, 'glimit')) or 0 end
  return glimitCache
end

-- Puts group g in the rotation; true when it was not there.
local function activateGroup(g)
  if redis.call('SADD', K_GSET, g) == 1 then
    redis.call('RPUSH', K_GACTIVE, g)
    if not gFlagSet then
      redis.call('HSET', K_META, 'g', '1')
      gFlagSet = true
    end
    wakeNeeded = true
    return true
  end
  return false
end

-- Makes ids of group g leasable (FIFO within the group; `head`: before its other jobs).
-- Per-group overrides of groupConcurrency and groupLimiter (queue.setGroupOverride): the hash
-- '<tag>:govr' holds 'c:<group>' -> concurrency and 'r:<group>' -> rate limit (as grl), read
-- only while meta govr says it has any, so that queues without overrides pay nothing.
local groupOverrides = {} -- .on: per call (reset by begin()), whether meta govr is set

function groupOverrides.any()
  if groupOverrides.on == nil then groupOverrides.on = redis.call('HEXISTS', K_META, 'govr') == 1 end
  return groupOverrides.on
end

-- Group g's concurrency limit (0: none).
function groupOverrides.limitOf(g)
  if groupOverrides.any() then
    local c = redis.call('HGET', K_TAG .. ':govr', 'c:' .. g)
    if c then return tonumber(c) end
  end
  return groupLimit()
end

-- Group g's rate limit, where the queue has one for its groups (`grl`, meta grl).
function groupOverrides.rateOf(g, grl)
  if grl and groupOverrides.any() then return redis.call('HGET', K_TAG .. ':govr', 'r:' .. g) or grl end
  return grl
end

-- Replaces group g's override (nil c and r remove it); a group parked at its old limit that
-- now has room rejoins the rotation.
function groupOverrides.set(g, c, r)
  local key = K_TAG .. ':govr'
  redis.call('HDEL', key, 'c:' .. g, 'r:' .. g)
  if c then redis.call('HSET', key, 'c:' .. g, c) end
  if r then redis.call('HSET', key, 'r:' .. g, r) end
  if redis.call('EXISTS', key) == 1 then redis.call('HSET', K_META, 'govr', '1') else redis.call('HDEL', K_META, 'govr') end
  groupOverrides.on = nil
  local lim = groupOverrides.limitOf(g)
  if redis.call('LLEN', groupKey(g)) > 0 and (lim == 0 or (tonumber(redis.call('HGET', K_GWORK, g)) or 0) < lim) then
    activateGroup(g)
  end
end

-- Every override, flat: group, concurrency (-1 none), rate limit ('' none).
function groupOverrides.list()
  local byGroup, order = {}, {}
  -- HKEYS and HMGET: commands of the least-privilege ACL line (README), where HGETALL is not
  local key = K_TAG .. ':govr'
  local fields = redis.call('HKEYS', key)
  local values = hmgetMany(key, fields)
  for i, f in ipairs(fields) do
    local kind, g = string.sub(f, 1, 1), string.sub(f, 3)
    if not byGroup[g] then
      byGroup[g] = { -1, '' }
      order[#order + 1] = g
    end
    if kind == 'c' then byGroup[g][1] = tonumber(values[i]) else byGroup[g][2] = values[i] end
  end
  local out = {}
  for _, g in ipairs(order) do
    out[#out + 1] = g
    out[#out + 1] = byGroup[g][1]
    out[#out + 1] = byGroup[g][2]
  end
  return out
end

local function pushGroup(g, ids, head)
  local len = callMany(head and 'LPUSH' or 'RPUSH', groupKey(g), ids)
  redis.call('HINCRBY', K_META, 'gp', #ids)
  if len == #ids then redis.call('SADD', K_GROUPS, g) end
  local lim = groupOverrides.limitOf(g)
  if lim == 0 or (tonumber(redis.call('HGET', K_GWORK, g)) or 0) < lim then activateGroup(g) end
end
