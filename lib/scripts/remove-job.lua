--[[
  Removes one job, whatever its state (lib/core/queue/management.ts remove()): it leaves
  every index, its record, its result and its idempotency window (include/remove.lua). A
  leased job is refused unless forced; forced, its lease ends at once, so the holder's ack,
  nack, requeue, reject and touch answer false.
  Cost: O(1) for a delayed, leased, completed or dead job and a prioritized one; O(position)
  for a job in the FIFO pending list or its group's list (LREM from the head).

  Input:
    KEYS[1..15]  the queue keys (include/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      job id
    ARGV[3]      force: '1' removes a leased job too, '0' refuses it

  Output:
    1 removed, 0 no such job, 'leased' refused (leased and not forced: nothing written)

  Events:
    removed
]]
eventsArg = ARGV[1] == '1'
local id, force = ARGV[2], ARGV[3] == '1'
local rec = redis.call('HGET', K_JOBS, id)
if not rec then return 0 end
local state = locateJob(id)
if state == 'working' and not force then return 'leased' end
local ended = endedLeases()
removeJob(id, rec, state, ended)
if state == 'delayed' then refreshNextDue() end
flushRemoved(ended)
flushWake()
flushEvents()
return 1
