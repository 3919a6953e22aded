--[[
  Per-state counts, read atomically (lib/core/queue/inspector.ts counts()). Read-only: it
  still runs when Redis refuses writes.

  Input:
    KEYS[1..15]  the queue keys (include/keys.lua)

  Output:
    { pending, working, delayed, completed, dead, paused, ghosts }
      pending    ungrouped (list + prioritized) and grouped (meta gp)
      completed  jobs whose retention has not ended: those past it are not counted, whether
                 or not a sweep removed them yet
      paused     1 paused, 0 not
      ghosts     ids dropped by lease calls because their record was gone (meta ghosts)
]]
return {
  redis.call('LLEN', K_PENDING) + redis.call('ZCARD', K_PRIO) + (tonumber(redis.call('HGET', K_META, 'gp')) or 0),
  redis.call('ZCARD', K_WORKING),
  redis.call('ZCARD', K_DELAYED),
  redis.call('ZCOUNT', K_DONE, '(' .. nowMs(), '+inf'),
  redis.call('ZCARD', K_DEAD),
  redis.call('HEXISTS', K_META, 'paused'),
  tonumber(redis.call('HGET', K_META, 'ghosts')) or 0,
}
