--[[
  Settle items: the ends of leases (ack, nack, requeue, reject, delay) that lease.lua and
  settle.lua apply in bulk, fenced by the lease token. Retention and idempotency window come
  from the stored token (settles/policy.lua), backoff from the record: never from the caller,
  so a lease rebuilt from its id and token settles exactly like the original. Needs
  redis/keys.lua, redis/calls.lua, redis/record.lua, redis/lease-token.lua,
  settles/policy.lua, events/events.lua, groups/groups.lua, settles/ended.lua, adds/pending.lua,
  adds/delayed.lua, settles/retention.lua, adds/deduplication-ends.lua, settles/failures.lua,
  rate-limits/limiter.lua, metrics-history/history.lua.
]]

-- The file's own helpers are local to the block below (not indented), so that they take no
-- place among the prelude's top-level locals: Lua allows a function 200.
local settleItems
do
-- A completed event carries the job's result up to this many bytes of JSON, and the events
-- of one call carry results of up to EVENT_RESULTS_MAX bytes in all. A call publishes all its
-- events as one message, so a batch of large results could pass Redis's pub/sub output limit
-- and cut every subscriber off; a result past either bound is left out (resultOmitted) and
-- read with getJob while the job is kept.
local EVENT_RESULT_MAX = 16384
local EVENT_RESULTS_MAX = 262144

-- Where item i's id is in the arguments (its token follows): items are read in place, not
-- copied into tables first.
local function idAt(base, n, p, i)
  if i <= n then return base + (i - 1) * 5 + 2 end
  return p + 1 + (i - n - 1) * 2
end

-- Settles the items in `args` from index `base` (appendSettleItems in
-- lib/core/settles/settle-items.ts writes them): n full items of 5 fields, then m acks without
-- a result (a busy worker's usual outcome: 2 fields each):
--   n, n x (op, id, token, a1, a2), m, m x (id, token)
--   a  ack      a1 = result json ('' for none)
--   n  nack     a1 = error text,  a2 = retry delay ms, or 'b<random in [0,1)>': the job's backoff
--   q  requeue  a1 = reason,      a2 = delay ms (not a failed attempt)
--   r  reject   a1 = reason                   (dead letter at once)
--   l  limited  a1 = 'g' the job's group or 'q' the queue, a2 = ms: back at the head, not a
--               failed attempt, and that window held closed for a2 ms (rate-limits/limiter.lua)
--   d  delayed  a2 = 'a<ms>' due at that time (Redis clock) or 'd<ms>' that long from now: a
--               step job its handler moved (job.moveToDelayed, snooze). As a requeue, not a
--               failed attempt; its data as saved before (update-data.lua)
--   w  children   its handler waits for the children it added (job.waitForChildren): in
--               'waiting-children' until they are done, pending at once when none is left,
--               dead when one it cannot go on without died (flows/flows.lua runningParents.await).
--               As a requeue, not a failed attempt
-- Only the current token of a job settles it; any other token changes nothing. `defaults`:
-- the built-in policy (parseDefaults). The ended leases go into `ended` (settles/ended.lua).
-- A queue that keeps a metrics history counts the completed, failed and dead attempts, with
-- their run times, in one write per touched field at the end (metrics-history/history.lua).
-- Returns a 0/1 per item: the n full ones, then the m acks.
function settleItems(args, base, now, defaults, ended)
  local n = num(args[base])
  local p = base + 1 + n * 5
  local m = num(args[p])
  local out = {}
  local total = n + m
  if total == 0 then return out end
  local ids = {}
  for i = 1, total do ids[i] = args[idAt(base, n, p, i)] end
  local held = hmgetMany(K_LEASES, ids)
  local valid, seen = {}, total > 1 and {} or nil
  for i = 1, total do
    local id, token = ids[i], args[idAt(base, n, p, i) + 1]
    -- A lease named twice in one call settles once: the first item wins.
    if held[i] and held[i] == token and not (seen and seen[id]) then
      if seen then seen[id] = true end
      valid[#valid + 1] = id
      out[i] = 1
    else
      out[i] = 0
    end
  end
  if #valid == 0 then return out end
  callMany('HDEL', K_LEASES, valid)
  callMany('ZREM', K_WORKING, valid)

  local drop, done, results, dedup, mx -- made when first needed (mx: metrics-history/history.lua)
  local resultBytes = 0 -- of the results the completed events carry
  local freed = 0 -- acked or dead-lettered: no longer counted against a bound
  for i = 1, total do
    if out[i] == 1 then
      local k = idAt(base, n, p, i)
      local id, token, op, a1, a2 = args[k], args[k + 1], 'a', '', ''
      if i <= n then op, a1, a2 = args[k - 1], args[k + 2], args[k + 3] end
      local keepMs, dedupMs, flow, group, most = parseToken(token)
      leaseEnded(ended, group) -- nothing for a plain queue's token
      -- a lease of a queue that keeps a metrics history has a '!' in its token: looked for
      -- once here, so that the others make no call per settled job to be counted
      local counted = string.find(token, '!', 1, true)
      if op == 'a' then
        freed = freed + 1
        if counted then mx = metricsHistory.note(mx, token, 'c', now, true) end
        if not keepMs then keepMs, dedupMs = defaults.keepMs, 0 else flowAcked(id, flow, a1, keepMs) end -- flows/flows.lua
        if most then retainCompleted(most) end -- settles/retention.lua
        if keepMs > 0 then
          if not done then done, results = {}, {} end
          done[#done + 1] = int(now + keepMs)
          done[#done + 1] = id
          results[#results + 1] = id
          -- d: how long since its lease began (its processedOn, JobInfo), when its token says
          local start = tonumber(leaseStart(token))
          results[#results + 1] = '{"at":' .. int(now) .. (start and ',"d":' .. int(now - start) or '') .. ',"r":' .. (a1 ~= '' and a1 or 'null') .. '}'
        else
          if not drop then drop = {} end
          drop[#drop + 1] = id
        end
        if dedupMs > 0 then
          if not dedup then dedup = {} end
          dedup[#dedup + 1] = int(now + dedupMs)
          dedup[#dedup + 1] = id
        end
        if eventsOn() then
          local omitted = #a1 > EVENT_RESULT_MAX or resultBytes + #a1 > EVENT_RESULTS_MAX
          if not omitted then resultBytes = resultBytes + #a1 end
          emit({ type = 'completed', id = id, result = a1 ~= '' and not omitted and a1 or nil, resultOmitted = omitted or nil }) -- the JSON text
        end
        -- only a token that carries flow bits can hold dedupIds.ENDS (adds/deduplication.lua)
        if flow and flowBit(flow, dedupIds.ENDS) then dedupIds.acked(id, now) end
      else
        local rec = redis.call('HGET', K_JOBS, id)
        if rec then
          if op == 'n' then
            local delayMs = tonumber(a2)
            if not delayMs then
              local attempt = (metaInt(rec, 'f') or 0) - (metaInt(rec, 'o') or 0) + 1
              delayMs = backoffDelay(rec, attempt, tonumber(string.sub(a2, 2)) or 0, defaults)
            end
            local became = failAttempt(id, rec, now, a1, delayMs, 'failed', token)
            if became == 'dead' then freed = freed + 1 end
            if counted then mx = metricsHistory.note(mx, token, became == 'dead' and 'd' or 'f', now, true) end
          elseif op == 'l' then
            local meta = decodeMeta(rec) or {}
            pushPending({ id }, { meta.p or 0 }, { meta.g or false }, true)
            local ms = tonumber(a2)
            if a1 == 'g' and meta.g then hold(glimKey(meta.g), 'grl', ms) else hold(K_LIMITER, 'rl', ms) end
            emit({ type = 'limited', id = id, delayMs = ms, group = a1 == 'g' and meta.g or nil })
          elseif op == 'w' then
            local meta, data = decodeMeta(rec)
            local next, why
            if meta then
              meta.r = (meta.r or 0) + 1
              meta.po = tonumber(leaseStart(token))
              next, why = runningParents.await(id, now)
            end
            if next == 'dead' then
              deadLetter(id, meta, data, now, why)
              freed = freed + 1
              if counted then mx = metricsHistory.note(mx, token, 'd', now, true) end
            elseif meta then
              redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
              if next == 'run' then
                pushPending({ id }, { meta.p or 0 }, { meta.g or false })
                emit({ type = 'promoted', id = id })
              end
            else
              deadLetterUndecodable(id, now)
              freed = freed + 1
              if counted then mx = metricsHistory.note(mx, token, 'd', now, true) end
            end
          elseif op == 'q' or op == 'd' then
            local meta, data = decodeMeta(rec)
            if meta then
              meta.r = (meta.r or 0) + 1
              meta.po = tonumber(leaseStart(token))
              redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
              if op == 'd' then
                local at = tonumber(string.sub(a2, 2))
                if string.sub(a2, 1, 1) == 'd' then at = now + at end
                addDelayed(id, at)
                emit({ type = 'delayed', id = id, runAt = at })
              else
                local delayMs = tonumber(a2)
                if delayMs > 0 then addDelayed(id, now + delayMs) else pushPending({ id }, { meta.p or 0 }, { meta.g or false }) end
                emit({ type = 'retried', id = id, reason = a1, delayMs = delayMs, runAt = delayMs > 0 and now + delayMs or nil })
              end
            else
              deadLetterUndecodable(id, now)
              freed = freed + 1
              if counted then mx = metricsHistory.note(mx, token, 'd', now, true) end
            end
          else
            local meta, data = decodeMeta(rec)
            if meta then
              meta.f = (meta.f or 0) + 1 -- a rejected delivery is a failed one
              meta.po = tonumber(leaseStart(token))
            end
            deadLetter(id, meta, data, now, a1)
            freed = freed + 1
            if counted then mx = metricsHistory.note(mx, token, 'd', now, true) end
          end
        end
      end
    end
  end
  ended.freed = ended.freed + freed
  if drop then
    callMany('HDEL', K_JOBS, drop)
    noteDropped(drop) -- their progress and lines: forgetDropped() at the end of the call
  end
  if done then
    callMany('ZADD', K_DONE, done)
    callMany('HSET', K_RESULTS, results)
  end
  if dedup then callMany('ZADD', K_DEDUP, dedup) end
  metricsHistory.flush(mx, now)
  return out
end
end -- of the block
