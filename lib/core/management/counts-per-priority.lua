--[[
  Pending jobs per priority, read atomically (lib/core/management/inspector.ts
  countsPerPriority()). Priority 0 is the FIFO list plus the grouped jobs (a group's jobs
  have no priority, meta gp); any other priority is one ZCOUNT of its score range in K_PRIO
  (adds/pending.lua: -p * PRIO_SPAN, give or take the sequence). Delayed, leased and
  finished jobs are not pending, whatever their priority. Read-only: it still runs when
  Redis refuses writes. Cost: O(log P) per priority asked for.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      priorities: the priorities asked for, comma-separated (checked by the client)

  Output:
    one count per priority, in the order asked for
]]
local out = {}
local zero -- priority 0, read once however often it is asked for
for p in string.gmatch(ARGV[1], '[^,]+') do
  local prio = tonumber(p)
  if prio == 0 then
    zero = zero or redis.call('LLEN', K_PENDING) + (tonumber(redis.call('HGET', K_META, 'gp')) or 0)
    out[#out + 1] = zero
  else
    -- a sequence stays under PRIO_SPAN / 2 (adds/pending.lua), so the ranges do not overlap
    local mid = -prio * PRIO_SPAN
    out[#out + 1] = redis.call('ZCOUNT', K_PRIO, '(' .. int(mid - PRIO_SPAN / 2), '(' .. int(mid + PRIO_SPAN / 2))
  end
end
return out
