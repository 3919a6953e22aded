--[[
  Cancels one job (lib/core/management/management.ts cancel()). A job not leased (pending,
  delayed, a flow's parent waiting for its children) is removed as remove() removes it
  (management/remove.lua), a parent with its unfinished descendants. A leased job's lease
  ends at once, settled as if its holder had: outcome 'dead' dead-letters it (as reject()),
  'retry' fails the attempt (as a nack without a delay: retried after the job's built-in
  backoff, dead once its attempts are spent), with `error`. The holder's late ack, nack,
  requeue, reject and touch change nothing (the token fence). Each lease it ends is
  remembered in K_CANCELLED, so that the holder's touch answers 'cancelled' rather than
  'lost', and published on K_CANCELS for the worker that holds it
  (lib/core/worker/cancel-notices.ts). A request run twice (redis/replay.lua) answers as the
  first run did and changes nothing. Cost: as remove() for a job not leased, as one settle
  for a leased one; plus O(log C) per ended lease for the C leases cancelled in the last
  minutes.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)
    KEYS[16]     this request's replay record, '<tag>:req:<reqId>'

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      policy: the built-in policy defaults (settles/policy.lua)
    ARGV[3]      id: the job's id
    ARGV[4]      outcome: 'dead' or 'retry', for a leased job
    ARGV[5]      error: the text a leased job fails with (its CancelledError)
    ARGV[6]      jitter: a random number in [0, 1), for the backoff of a retry
    ARGV[7]      reason: the cancel's reason, '' for none (its event and notices)

  Output:
    'removed' (it was not leased), 'dead' or 'retried' (it was leased: where it went), or ''
    when there is no such job or it already finished (completed or dead): nothing written

  Events:
    cancelled; removed (not leased), dead (a parent that waited for it); failed, retried,
    dead (leased, as a settle)
]]
-- How long past the end of its lease a cancelled token is remembered: longer than its
-- worker takes to touch it (a heartbeat comes by half the lease), with room for a stalled one.
local CANCELLED_FOR_MS = 60000

local K_CANCELLED, K_CANCELS, K_WHY = K_TAG .. ':cancelled', K_TAG .. ':cancels', K_TAG .. ':cancelwhy' -- redis/keys.lua

eventsArg = ARGV[1] == '1'
local recorded = redis.call('GET', KEYS[16])
if recorded then return recorded end
local id, outcome, reason = ARGV[3], ARGV[4], ARGV[7]
local rec = redis.call('HGET', K_JOBS, id)
if not rec then return '' end
local state = locateJob(id)
if state == 'completed' or state == 'dead' then return '' end
local now = nowMs()
local notices = {}

-- The lease of job `jid` with `token` ends here: remembered (read before it ends: its deadline), and its notice kept.
local function cancelLease(jid, token)
  local deadline = tonumber(redis.call('ZSCORE', K_WORKING, jid)) or now
  redis.call('ZADD', K_CANCELLED, int(math.max(deadline, now) + CANCELLED_FOR_MS), token)
  if reason ~= '' then redis.call('HSET', K_WHY, token, reason) end -- for a touch: the notice may be missed
  notices[#notices + 1] = { id = jid, token = token, reason = reason ~= '' and reason or nil }
end

emit({ type = 'cancelled', id = id, reason = reason ~= '' and reason or nil })
local ended = endedLeases()
local answer = 'removed'
if state == 'working' then
  local token = redis.call('HGET', K_LEASES, id)
  cancelLease(id, token)
  -- one settle item (settles/settle-items.lua): a failed attempt, or a rejected delivery
  local item = outcome == 'retry' and 'n' or 'r'
  settleItems({ '1', item, id, token, ARGV[5], 'b' .. ARGV[6], '0' }, 1, now, parseDefaults(ARGV[2]), ended)
  flushRetention() -- management/remove.lua
  flushEnded(ended)
  answer = redis.call('ZSCORE', K_DEAD, id) and 'dead' or 'retried'
else
  -- a parent takes its unfinished descendants with it, their leases too (flows/flows.lua)
  local kids = flowPending(id, rec, state)
  for _, kid in ipairs(kids) do
    local token = redis.call('HGET', K_LEASES, kid)
    if token then cancelLease(kid, token) end
  end
  removeWithKids(id, rec, state, kids, ended)
  dedupIds.removed(id, rec) -- adds/deduplication.lua (a flow's jobs hold none)
end
if #notices > 0 then
  callMany('HDEL', K_WHY, redis.call('ZRANGEBYSCORE', K_CANCELLED, '-inf', int(now)))
  redis.call('ZREMRANGEBYSCORE', K_CANCELLED, '-inf', int(now))
  local last = redis.call('ZRANGE', K_CANCELLED, -1, -1, 'WITHSCORES')
  redis.call('PEXPIRE', K_CANCELLED, int(tonumber(last[2]) - now)) -- gone with its last token
  redis.call('PEXPIRE', K_WHY, int(tonumber(last[2]) - now))
  redis.call('SPUBLISH', K_CANCELS, cjson.encode(notices))
end
redis.call('SET', KEYS[16], answer, 'PX', REPLAY_MS)
flushWake()
flushEvents()
return answer
