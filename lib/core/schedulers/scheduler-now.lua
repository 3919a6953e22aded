--[[
  The Redis clock, from which an upsert computes a scheduler's first slot
  (lib/core/schedulers/schedulers.ts upsert()), as a tick computes the next ones. Read-only.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

  Output:
    now          Redis time (ms)
]]
return nowMs()
