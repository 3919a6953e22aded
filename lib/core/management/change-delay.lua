--[[
  Changes when a delayed job becomes pending (lib/core/management/management.ts
  changeDelay()): due `delayMs` from now on Redis's clock, whatever its due time was. Only a
  delayed job (as BullMQ's changeDelay): any other is left as it is. Among the jobs due at its
  new time it comes last (adds/delayed.lua). A call sent twice after a lost reply sets the due
  time from the second one's now. Cost: O(log D) for D delayed jobs, plus O(position) in the
  tie lists of its old and new due times.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      id: the job's id
    ARGV[3]      delayMs: from now, 0 to 2^41 (checked by the client)

  Output:
    1 changed, 0 the job is not delayed (or does not exist): nothing written

  Events:
    delayed (runAt: the new due time)
]]
eventsArg = ARGV[1] == '1'
local id = ARGV[2]
if not redis.call('ZSCORE', K_DELAYED, id) or redis.call('HEXISTS', K_JOBS, id) == 0 then return 0 end
local runAt = nowMs() + tonumber(ARGV[3])
unDelay(id)
addDelayed(id, runAt)
refreshNextDue() -- the job may have been the earliest
flushWake()
emit({ type = 'delayed', id = id, runAt = runAt })
flushEvents()
return 1
