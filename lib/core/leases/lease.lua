--[[
  Settles finished leases, then leases up to `count` more, in one round trip: a worker's
  hot path (lib/core/leases/leasing.ts leaseStep()). Due delayed jobs are promoted first. A
  request run twice (redis/replay.lua) answers as the first run did and changes nothing.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)
    KEYS[16]     this request's replay record, '<tag>:req:<reqId>'

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      reqId: the request id, which every lease token it grants starts with
    ARGV[3]      count: most jobs to lease
    ARGV[4]      leaseMs: lease length for jobs without their own (meta l)
    ARGV[5]      woken: '1' when the caller just took a wake-up token (it passes the wake-up
                 on if it leaves work behind), else '0'
    ARGV[6]      promoteLimit: most due delayed jobs to promote
    ARGV[7]      policy: the built-in policy defaults (settles/policy.lua)
    ARGV[8]      worker: the caller's registration as a live worker, '' none (workers/workers.lua)
    ARGV[9..]    items: settle items (settles/settle-items.lua)

  Output:
    { settled, head }
      settled  0/1 per settle item: the full ones, then the plain acks
      head     { now, nextDue, state, ghosts, then per lease: id, token, deadline, record }
        now       Redis time (ms)
        nextDue   due time of the next delayed job (ms), -1 when none is known
        state     0 open, 1 paused (nothing leased), 2 closed and drained (nothing leased,
                  nothing will come), 3 deleted
        ghosts    ids dropped because their record was gone
        deadline  lease end (ms); token: leases/lease-jobs.lua grantLeases()
    A replayed request answers its recorded settles and the leases it still holds, with
    nextDue -1, state 0 and ghosts 0.

  Events:
    settle items: completed, failed, retried, dead, limited, delayed, added (as settle.lua);
    promoted; leased; drained (it leased the last pending jobs); stats (consumed totals, a
    queue with stats)
]]
eventsArg = ARGV[1] == '1'
local now = nowMs()
local recorded = redis.call('GET', KEYS[16])
local ended = endedLeases()
-- now, nextDue, state, ghosts, then the leases (appended to it: nothing is copied)
local head = { now, -1, 0, 0 }
local settled
if recorded then
  local ids
  settled, ids = recordedRequest(recorded)
  replayLeases(head, ids, ARGV[2])
else
  local leaseMs = num(ARGV[4])
  local defaults = parseDefaults(ARGV[7])
  settled = settleItems(ARGV, 9, now, defaults, ended)
  -- Groups freed by these settles rejoin the rotation before this call leases, so it can
  -- take their next jobs itself; only a group it left in the rotation wakes another leaser.
  local woke = wakeNeeded
  local rejoined = flushEndedGroups(ended)
  if rejoined then wakeNeeded = woke end
  local nextDue, state, ghosts, leased = leaseJobs(head, now, ARGV[2], num(ARGV[3]), leaseMs, ARGV[5] == '1', num(ARGV[6]), defaults)
  -- (a call that leased fewer than it asked for left nothing leasable in the rotation)
  if rejoined and not wakeNeeded and #leased >= num(ARGV[3]) then
    for _, g in ipairs(rejoined) do
      if redis.call('SISMEMBER', K_GSET, g) == 1 then
        wakeNeeded = true
        break
      end
    end
  end
  head[2], head[3], head[4] = nextDue or -1, state, ghosts
  recordRequest(KEYS[16], settled, leased, leaseMs)
end
if head[3] ~= 3 then workerList.note(ARGV[8], now) end -- a deleted queue keeps no keys
forgetDropped()
flushRetention() -- management/remove.lua
flushEnded(ended)
flushWake()
flushEvents()
return { settled, head }
