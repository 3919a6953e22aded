-- Extends leases (heartbeat). ARGV: 1 n, then n items of: id, token, extendMs.
-- Reply per item: the new deadline, or 0 when that token no longer holds the job.
local now = nowMs()
local n = tonumber(ARGV[1])
local ids = {}
for i = 1, n do ids[i] = ARGV[2 + (i - 1) * 3] end
local held = hmgetMany(K_LEASES, ids)
local out, working = {}, {}
for i = 1, n do
  local b = 2 + (i - 1) * 3
  if held[i] and held[i] == ARGV[b + 1] then
    local deadline = now + tonumber(ARGV[b + 2])
    working[#working + 1] = deadline
    working[#working + 1] = ids[i]
    out[i] = deadline
  else
    out[i] = 0
  end
end
if #working > 0 then callMany('ZADD', K_WORKING, working, { 'XX' }) end
return out
