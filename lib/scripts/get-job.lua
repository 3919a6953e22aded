-- Reads one job. ARGV: 1 id.
-- Reply: { state, record, score (deadline / due / retention end / death time), result } or {}.
local id = ARGV[1]
local rec = redis.call('HGET', K_JOBS, id)
if not rec then return {} end
if redis.call('HEXISTS', K_LEASES, id) == 1 then
  return { 'working', rec, redis.call('ZSCORE', K_WORKING, id) or '' }
end
local s = redis.call('ZSCORE', K_DELAYED, id)
if s then return { 'delayed', rec, s } end
s = redis.call('ZSCORE', K_DONE, id)
if s then
  -- past its retention it is gone, whether or not a sweep removed it yet
  if tonumber(s) <= nowMs() then return {} end
  return { 'completed', rec, s, redis.call('HGET', K_RESULTS, id) or '' }
end
s = redis.call('ZSCORE', K_DEAD, id)
if s then return { 'dead', rec, s } end
return { 'pending', rec, '' }
