--[[
  Lease tokens, the fence of every lease (K_LEASES holds each leased job's current one):
    "<reqId>.<j>@<start>"              a job with the built-in retention, on a plain queue,
                                       leased at `start` (Redis time, ms)
    "...@<start>!<keepMinutes>"        of a queue that keeps a metrics history
                                       (metrics-history/history.lua)
    "...~<keepMs>,<dedupMs>[,<w>]"     its own retention, idempotency window, flow bits
    "...~<keepMs>,<dedupMs>,[<w>],<m>" the same, and its count of completed jobs kept
    "...*<group>"                      a lease of an extended queue ('' ungrouped)
  grantLeases (leases/lease-jobs.lua) builds them; settling reads retention, flow bits and
  group back from the stored token, never from the caller, so a lease rebuilt from its id and
  token settles like the original; the start becomes the job's processedOn (reads, and what
  a settle writes anyway: a completed job's result, a record rewritten). reqId holds no '.'
  or '@', and digits and commas no '~' or '*': the first '*' starts the group, and a '~'
  after it is the group's. Needs redis/calls.lua.
]]

-- `start`: '@' and the lease's start as digits (and a metrics history's mark), made once per
-- call. keep, dedup, flow and most as digits (strings): formatting numbers would cost more
-- than the rest.
local function leaseToken(reqId, j, start, keep, dedup, flow, group, most)
  local token = reqId .. '.' .. int(j) .. start
  if keep then
    token = token .. '~' .. keep .. ',' .. dedup
    if most then
      token = token .. ',' .. (flow or '') .. ',' .. most
    elseif flow then
      token = token .. ',' .. flow
    end
  end
  if group then token = token .. '*' .. group end
  return token
end

-- When the lease began (ms, as digits), nil for a token without its start (granted by an
-- older version). Anchored: a group may hold an '@'.
local function leaseStart(token)
  return string.match(token, '^[%w_%-]+%.%d+@(%d+)')
end

-- Parsed retention parts ('~<keep>,<dedup>[,<w>[,<m>]]' -> { keepMs, dedupMs, flow, most }). The
-- library outlives calls and a queue's jobs share a few policies, so most settles parse
-- none; emptied when it grows past any plausible number of policies.
local policyParts, policyCount = {}, 0

-- keepMs, dedupMs, flow bits, group, most (the count of completed jobs kept): nil where the
-- token does not say (the built-in retention, no flow, a plain queue, no count). This runs
-- for every settled job.
local function parseToken(token)
  local star = string.find(token, '*', 1, true)
  local group = star and string.sub(token, star + 1) or nil
  local tilde = string.find(token, '~', 1, true)
  if not tilde or (star and tilde > star) then return nil, nil, nil, group end
  local part = string.sub(token, tilde, star and star - 1 or -1)
  local p = policyParts[part]
  if not p then
    local keep, dedup, flow, most = string.match(part, '^~(%d+),(%d+),?(%d*),?(%d*)$')
    p = { tonumber(keep), tonumber(dedup), tonumber(flow), tonumber(most) }
    if policyCount >= 1000 then policyParts, policyCount = {}, 0 end
    policyParts[part], policyCount = p, policyCount + 1
  end
  return p[1], p[2], p[3], group, p[4]
end
