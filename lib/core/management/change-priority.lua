--[[
  Changes one job's priority (lib/core/management/management.ts changePriority()). A pending job
  moves to its new priority at once, behind the jobs that already have it (FIFO within a
  priority), or with lifo ahead of them (then also when its priority is unchanged); a
  delayed, leased or dead job keeps it for when it is pending again (due, retried, requeued
  or redriven: they all read it from the record), at the tail of it (lifo is not stored, as
  for a lifo add). A job with a group has no priority (FIFO within its group) and is
  refused. Cost: O(log P) for a prioritized job, O(position) for one in the FIFO pending
  list (LREM), O(1) in any other state; plus the record's size (its meta is rewritten).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      id: the job's id
    ARGV[2]      priority: -1000 to 1000 (checked by the client)
    ARGV[3]      lifo: '1' a pending job goes to the head of its priority, '0' to its tail

  Output:
    the job's state ('pending', 'delayed', 'working', 'dead'): changed; 'completed' (nothing to
    schedule) or '' (no such job): nothing written; 'grouped': refused, nothing written
]]
local id, priority, lifo = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1'
local rec = redis.call('HGET', K_JOBS, id)
if not rec then return '' end
local state = locateJob(id)
if state == 'completed' then return state end
local meta, data = decodeMeta(rec)
if not meta then return '' end -- an undecodable record is never leased again: nothing to schedule
if meta.g then return 'grouped' end
local same = (meta.p or 0) == priority
if same and not (lifo and state == 'pending') then return state end -- keeps its place
if not same then
  meta.p = priority ~= 0 and priority or nil -- the default is left out of records (redis/record.lua)
  redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
end
if state == 'pending' then
  unqueuePending(id, rec)
  pushPending({ id }, { priority }, nil, lifo)
end
flushWake()
return state
