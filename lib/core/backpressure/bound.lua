--[[
  Bounded queues (docs/bounded-fair-batch.md). Meta bound caps the unfinished jobs; a
  producer that finds the queue full registers in K_WAITERS (produce.lua) and blocks on
  K_NOTFULL, where a token is pushed for each slot freed while it waits. Needs
  redis/keys.lua, redis/calls.lua.
]]

-- Jobs that count against the bound: pending + working + delayed. Every record is one of
-- those, completed (in done) or dead.
local function unfinishedCount()
  return redis.call('HLEN', K_JOBS) - redis.call('ZCARD', K_DONE) - redis.call('ZCARD', K_DEAD)
end

-- One token per freed slot, at most one per registered waiter.
local function notifyWaiters(k)
  local w = redis.call('ZCARD', K_WAITERS)
  if w == 0 then return end
  local add = math.min(k, w - redis.call('LLEN', K_NOTFULL), 1000)
  if add > 0 then
    local t = {}
    for i = 1, add do t[i] = '1' end
    callMany('RPUSH', K_NOTFULL, t)
  end
end
