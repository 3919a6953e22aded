--[[
  Rate limits (docs/rate-limits.md), enforced by the lease script for every worker of a queue.
  meta rl = '<max>:<durationMs>' limits the queue to max leases per window; meta grl the same
  for each group. A window starts with its first lease: K_LIMITER (glimKey(g) for a group)
  counts the leases in it and expires when it ends. A hold (job.rateLimit, settle op 'l') sets
  the count past any max until it expires; max 0 marks a queue or groups that only have holds.
  A spent group leaves the rotation for K_GLIMITED until its window ends. Needs
  redis/keys.lua, groups/groups.lua.
]]

local HELD = 1125899906842624 -- 2^50: a count above any max, the window closed until it expires

local limitedUntil -- per call (reset by begin()): when the earliest window this call found spent ends

-- The earlier of two times, either of which may be nil.
local function earliest(a, b)
  if not a then return b end
  if not b then return a end
  return math.min(a, b)
end

local function parseLimit(cfg)
  local max, dur = string.match(cfg, '^(%d+):(%d+)$')
  return tonumber(max), tonumber(dur)
end

-- Leases the window of counter `key` still allows (at most `want`), and when it ends (ms) if
-- it allows none.
local function allowance(key, cfg, want, now)
  local max = parseLimit(cfg)
  local used = tonumber(redis.call('GET', key)) or 0
  local left = (max > 0 and max or HELD) - used
  if left > 0 then return math.min(want, left), nil end
  local ttl = redis.call('PTTL', key)
  if ttl < 0 then -- a counter without expiry cannot end its window: start afresh
    redis.call('DEL', key)
    return want, nil
  end
  return 0, now + ttl
end

-- Counts n leases in the window of `key` (the first lease opens it). Returns when the window
-- ends if these leases spent it.
local function spend(key, cfg, n, now)
  local max, dur = parseLimit(cfg)
  if n == 0 or max == 0 then return nil end
  local used = redis.call('INCRBY', key, n)
  if used == n then redis.call('PEXPIRE', key, dur) end
  if used >= max then return now + math.max(redis.call('PTTL', key), 0) end
  return nil
end

-- Closes a window for `ms`: the job that met an upstream limit holds back its queue or group.
local function hold(key, metaField, ms)
  redis.call('SET', key, HELD, 'PX', ms)
  redis.call('HSETNX', K_META, metaField, '0:0')
end

-- A group whose window is spent leaves the rotation until the window ends.
local function parkLimitedGroup(g, reopensAt)
  redis.call('SREM', K_GSET, g)
  redis.call('ZADD', K_GLIMITED, reopensAt, g)
end

-- Groups whose window ended rejoin the rotation (if they have jobs and room under glimit).
-- Returns when the next parked group's window ends, or nil.
local function reopenLimitedGroups(now)
  local due = redis.call('ZRANGEBYSCORE', K_GLIMITED, '-inf', now)
  if #due > 0 then
    callMany('ZREM', K_GLIMITED, due)
    local lim = groupLimit()
    for _, g in ipairs(due) do
      if redis.call('LLEN', groupKey(g)) > 0 and (lim == 0 or (tonumber(redis.call('HGET', K_GWORK, g)) or 0) < lim) then
        activateGroup(g)
      end
    end
  end
  local nextOpen = redis.call('ZRANGE', K_GLIMITED, 0, 0, 'WITHSCORES')
  return tonumber(nextOpen[2])
end
