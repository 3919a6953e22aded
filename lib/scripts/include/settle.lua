-- Ends leases in bulk. From ARGV[base]: n full items of 5 fields (op, id, token, a1, a2),
-- then m acks without a result sharing one a2 (a busy worker's usual outcome: 2 fields each):
--   n, n x (op, id, token, a1, a2), m, shared a2, m x (id, token)
--   a  ack      a1 = result json ('' for none), a2 = "<keepMs> <dedupMs>"
--   n  nack     a1 = error text,  a2 = retry delay ms (backoff computed by the client)
--   q  requeue  a1 = reason,      a2 = delay ms (not a failed attempt)
--   r  reject   a1 = reason                   (dead letter at once)
-- Only the current token of a job settles it; any other token changes nothing.
-- Returns a 0/1 per item (the n full ones, then the m acks) and the index of the first ARGV
-- after the items.
local function settleItems(now, base)
  local n = tonumber(ARGV[base])
  local p = base + 1 + n * 5
  local m = tonumber(ARGV[p])
  local after = p + 2 + m * 2
  local out = {}
  if n + m == 0 then return out, after end
  local ops, ids, tokens, a1s, a2s = {}, {}, {}, {}, {}
  for i = 1, n do
    local b = base + (i - 1) * 5 + 1
    ops[i], ids[i], tokens[i], a1s[i], a2s[i] = ARGV[b], ARGV[b + 1], ARGV[b + 2], ARGV[b + 3], ARGV[b + 4]
  end
  local shared = ARGV[p + 1]
  for j = 1, m do
    local b, i = p + 2 + (j - 1) * 2, n + j
    ops[i], ids[i], tokens[i], a1s[i], a2s[i] = 'a', ARGV[b], ARGV[b + 1], '', shared
  end
  n = n + m
  local held = hmgetMany(K_LEASES, ids)
  local valid, seen = {}, {}
  for i = 1, n do
    -- A lease named twice in one call settles once: the first item wins.
    if held[i] and held[i] == tokens[i] and not seen[ids[i]] then
      seen[ids[i]] = true
      valid[#valid + 1] = ids[i]
      out[i] = 1
    else
      out[i] = 0
    end
  end
  if #valid == 0 then return out, after end
  callMany('HDEL', K_LEASES, valid)
  callMany('ZREM', K_WORKING, valid)

  local drop, done, results, dedup = {}, {}, {}, {}
  for i = 1, n do
    if out[i] == 1 then
      local op, id, a1, a2 = ops[i], ids[i], a1s[i], a2s[i]
      leaseEnded(tokenGroup(tokens[i])) -- nothing for a plain queue's token (include/ext.lua)
      if op == 'a' then
        slotsFreed = slotsFreed + 1
        local keepMs, dedupMs = string.match(a2, '^(%d+) (%d+)$')
        keepMs, dedupMs = tonumber(keepMs), tonumber(dedupMs)
        if keepMs > 0 then
          done[#done + 1] = now + keepMs
          done[#done + 1] = id
          results[#results + 1] = id
          results[#results + 1] = '{"at":' .. now .. ',"r":' .. (a1 ~= '' and a1 or 'null') .. '}'
        else
          drop[#drop + 1] = id
        end
        if dedupMs > 0 then
          dedup[#dedup + 1] = now + dedupMs
          dedup[#dedup + 1] = id
        end
        emit({ type = 'completed', id = id })
      else
        local rec = redis.call('HGET', K_JOBS, id)
        if rec then
          if op == 'n' then
            failAttempt(id, rec, now, a1, tonumber(a2), 'failed')
          elseif op == 'q' then
            local meta, data = decodeMeta(rec)
            if meta then
              meta.r = (meta.r or 0) + 1
              redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
              local delayMs = tonumber(a2)
              if delayMs > 0 then addDelayed(id, now + delayMs) else pushPending({ id }, { meta.p or 0 }, { meta.g or false }) end
              emit({ type = 'retried', id = id, reason = a1, delayMs = delayMs })
            else
              deadLetterUndecodable(id, now)
            end
          else
            local meta, data = decodeMeta(rec)
            if meta then meta.f = (meta.f or 0) + 1 end -- a rejected delivery is a failed one
            deadLetter(id, meta, data, now, a1)
          end
        end
      end
    end
  end
  if #drop > 0 then callMany('HDEL', K_JOBS, drop) end
  if #done > 0 then
    callMany('ZADD', K_DONE, done)
    callMany('HSET', K_RESULTS, results)
  end
  if #dedup > 0 then callMany('ZADD', K_DEDUP, dedup) end
  return out, after
end
