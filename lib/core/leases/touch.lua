--[[
  Extends leases: a worker's heartbeat (lib/core/settles/settling.ts touchMany()). Only the
  current token of a job extends it. A worker's heartbeat also carries its registration as a
  live worker when it is due and no lease call did (workers/workers.lua).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      worker: the caller's registration as a live worker, '' none (workers/workers.lua)
    ARGV[2..]    leases: n, then n leases of 3 fields each:
                   id, token, extendMs (the new deadline is now + extendMs)

  Output:
    one value per lease: its new deadline (ms, Redis clock), or when that token no longer
    holds the job, if cancel() ended its lease (management/cancel-job.lua), the cancel's reason
    (a string) or -1 for none; else 0
]]
local now = nowMs()
local n = tonumber(ARGV[2])
local ids = {}
for i = 1, n do ids[i] = ARGV[3 + (i - 1) * 3] end
local held = hmgetMany(K_LEASES, ids)
local out, working = {}, {}
for i = 1, n do
  local b = 3 + (i - 1) * 3
  if held[i] and held[i] == ARGV[b + 1] then
    local deadline = now + tonumber(ARGV[b + 2])
    working[#working + 1] = deadline
    working[#working + 1] = ids[i]
    out[i] = deadline
  elseif redis.call('ZSCORE', K_TAG .. ':cancelled', ARGV[b + 1]) then -- read only for a lease that ended
    out[i] = redis.call('HGET', K_TAG .. ':cancelwhy', ARGV[b + 1]) or -1
  else
    out[i] = 0
  end
end
if #working > 0 then callMany('ZADD', K_WORKING, working, { 'XX' }) end
workerList.note(ARGV[1], now)
return out
