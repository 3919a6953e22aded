--[[
  Retention of finished jobs by age and by count (keepCompleted, keepDead; the job options in
  README.md). Age: a completed job is indexed in K_DONE by the end of its retention
  (settles/settle-items.lua); a dead job with keepDead.ageMs (meta da) also in K_DEADEXP, and
  the sweep (leases/sweep.lua) removes those whose end passed, `limit` per call. Count: a job
  with a count that completes (meta m, read from its lease token) or dies (meta dn) has the
  queue's completed (dead) jobs trimmed to that count, oldest first, by flushRetention() at
  the end of the call (management/remove.lua, where jobs leave). Each such job allows
  RETENTION_STEP removals, more than the one it adds, so the set converges to a lowered count
  over the next jobs without any call doing work in proportion to the set. A job without
  these options notes nothing here, and the call does nothing more. Needs redis/keys.lua,
  redis/calls.lua.
]]

-- Removals beyond a count that one job with a count allows.
local RETENTION_STEP = 10

-- Per call (reset by begin()): the smallest count asked for and the removals allowed, of
-- completed (doneMost, doneBudget) and dead jobs (deadMost, deadBudget); dead jobs kept 0 ms
-- (deadDrop). nil while no job asked.
local doneMost, doneBudget, deadMost, deadBudget, deadDrop

-- A job with keepCompleted.count `most` completed in this call.
local function retainCompleted(most)
  doneMost = doneMost and math.min(doneMost, most) or most
  doneBudget = (doneBudget or 0) + RETENTION_STEP
end

-- Job `id` (its decoded meta: `meta`, {} when it cannot be read) goes to the dead set at
-- `now`, with its keepDead: an end of retention for the sweep, a count for the end of the call.
local function addDead(id, meta, now)
  redis.call('ZADD', K_DEAD, int(now), id)
  local ageMs, most = tonumber(meta.da), tonumber(meta.dn)
  if ageMs then
    redis.call('ZADD', K_DEADEXP, int(now + ageMs), id) -- the sweep's, when this call does not remove it
    if ageMs == 0 then
      deadDrop = deadDrop or {}
      deadDrop[#deadDrop + 1] = id
    end
  end
  if most then
    deadMost = deadMost and math.min(deadMost, most) or most
    deadBudget = (deadBudget or 0) + RETENTION_STEP
  end
end
