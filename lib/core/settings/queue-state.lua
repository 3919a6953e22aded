--[[
  A queue's settings and its live (unexpired) waiters (lib/core/settings/queue-settings.ts
  state()).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

  Output:
    { closed 0/1, bound (0 none), glimit (0 none), stats 0/1, waiters, rl, grl ('' none),
      gc (0 none), group overrides (flat: group, concurrency or -1, rl or ''), mx (minutes of
      metrics history kept, 0 none) },
    or 'deleted' (tombstone)
]]
if isDeleted() then return 'deleted' end
local m = redis.call('HMGET', K_META, 'closed', 'bound', 'glimit', 'stats', 'rl', 'grl', 'gc', 'mx')
local live = redis.call('ZCOUNT', K_WAITERS, '(' .. nowMs(), '+inf') -- expired ones are crashed waiters
return { m[1] and 1 or 0, tonumber(m[2]) or 0, tonumber(m[3]) or 0, m[4] and 1 or 0, live, m[5] or '', m[6] or '',
  tonumber(m[7]) or 0, groupOverrides.list(), tonumber(m[8]) or 0 }
