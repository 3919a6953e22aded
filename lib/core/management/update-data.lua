--[[
  Replaces a job's data (lib/core/management/management.ts updateData()). The record keeps
  its meta (name, attempts, priority, failures, error history), so the job goes on where it
  is with the new data: a pending or delayed job is leased with it, a dead one redriven with
  it, a step job (docs/handlers.md) resumes from it after a crash. A job no lease holds is
  changed by its id; a leased one only through its lease token (a handler's
  job.updateData()), so that neither an operator nor a stale lease writes under the handler
  that holds it. Writing the same data again changes nothing more: a call sent twice after a
  lost reply is harmless. Cost: O(size of the record).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      id: the job's id
    ARGV[2]      token: the lease token of a handler's change, '' for a change by id
    ARGV[3]      data: the new data, JSON (checked by the client)

  Output:
    1 written; 0 nothing written: no such job (or it completed and its retention ended), or
    that token no longer holds it; 'leased' refused, nothing written (by id, and a lease
    holds the job)
]]
local id, token = ARGV[1], ARGV[2]
local rec = redis.call('HGET', K_JOBS, id)
if not rec then return 0 end
if token ~= '' then
  if redis.call('HGET', K_LEASES, id) ~= token then return 0 end
else
  local state, score = locateJob(id) -- management/remove.lua
  if state == 'working' then return 'leased' end
  if state == 'completed' and tonumber(score) <= nowMs() then return 0 end -- gone, as for getJob
end
redis.call('HSET', K_JOBS, id, metaPart(rec) .. '\n' .. ARGV[3])
return 1
