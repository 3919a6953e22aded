--[[
  One scheduler tick's writes (lib/core/schedulers/schedulers.ts runSchedulers()): for each
  scheduler whose next slot came due, the slots the client computed from the Redis time of
  its read, applied only if the scheduler is still at that version and that next slot (a
  compare-and-set). Of many processes ticking at once one wins; a replay after a lost reply
  finds the slot moved and writes nothing. Cost: O(log D) per job added.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2..]    moves: n, then n items of 6 fields:
                   id, version, next slot read (the CAS), catch-up slot ('' none: the one
                   job for slots missed, due at once), new next slot ('' the scheduler
                   ends), job record

  Output:
    one integer per item: -1 when the CAS failed (nothing written), else the jobs created as
    bits: 1 the catch-up job, 2 the new next slot's job

  Events:
    added
]]
eventsArg = ARGV[1] == '1'
local out = {}
for i = 1, tonumber(ARGV[2]) do
  local b = 3 + (i - 1) * 6
  local id, catchUp, newNext, rec = ARGV[b], ARGV[b + 3], ARGV[b + 4], ARGV[b + 5]
  local v, nxt, made = schedState(id)
  if v ~= tonumber(ARGV[b + 1]) or nxt ~= ARGV[b + 2] then
    out[i] = -1
  else
    local created = 0
    if catchUp ~= '' then
      created = created + addSlotJob(id, catchUp, rec, nowMs)
      made = made + 1
    end
    if newNext ~= '' then
      created = created + 2 * addSlotJob(id, newNext, rec, nowMs)
      made = made + 1
    end
    setSchedState(id, v, newNext ~= '' and newNext or nil, made)
    out[i] = created
  end
end
flushWake()
flushEvents()
return out
