--[[
  Removes one job, whatever its state (lib/core/management/management.ts remove()): it leaves
  every index, its record, its result and its idempotency window (management/remove.lua), and
  frees the deduplication id it held (adds/deduplication.lua). A leased job is refused
  unless forced; forced, its lease ends at once, so the holder's ack, nack, requeue, reject
  and touch answer false. A parent not finished takes its
  unfinished descendants with it (refused when one is leased, unless forced); a parent that
  still waited for the job fails, as if it had died (docs/flows.md).
  Cost: O(1) for a delayed, leased, completed or dead job and a prioritized one; O(position)
  for a job in the FIFO pending list or its group's list (LREM from the head), and for a
  delayed job in its due time's tie list (adds/delayed.lua).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      id: the job's id
    ARGV[3]      force: '1' removes a leased job too, '0' refuses it

  Output:
    1 removed, 0 no such job, 'leased' refused (leased and not forced: nothing written)

  Events:
    removed; dead (a parent that waited for it)
]]
eventsArg = ARGV[1] == '1'
local id, force = ARGV[2], ARGV[3] == '1'
local rec = redis.call('HGET', K_JOBS, id)
if not rec then return 0 end
local state = locateJob(id)
if state == 'working' and not force then return 'leased' end
-- an unfinished parent takes its unfinished descendants with it (flows/flows.lua; also one
-- that added them as it ran: job.addChildren); checked first
local kids = flowPending(id, rec, state)
if not force then
  for _, kid in ipairs(kids) do
    if redis.call('HEXISTS', K_LEASES, kid) == 1 then return 'leased' end
  end
end
removeWithKids(id, rec, state, kids, endedLeases())
dedupIds.removed(id, rec) -- adds/deduplication.lua (a flow's jobs hold none)
flushWake()
flushEvents()
return 1
