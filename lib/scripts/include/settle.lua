-- Ends leases in bulk. ARGV[base] = n, then n items of 5 fields: op, id, token, a1, a2.
--   a  ack      a1 = result json ('' for none), a2 = "<keepMs> <dedupMs>"
--   n  nack     a1 = error text,  a2 = retry delay ms (backoff computed by the client)
--   q  requeue  a1 = reason,      a2 = delay ms (not a failed attempt)
--   r  reject   a1 = reason                   (dead letter at once)
-- Only the current token of a job settles it; any other token changes nothing.
-- Returns a 0/1 per item and the index of the first ARGV after the items.
local function settleItems(now, base)
  local n = tonumber(ARGV[base])
  local out = {}
  if n == 0 then return out, base + 1 end
  local ids = {}
  for i = 1, n do ids[i] = ARGV[base + (i - 1) * 5 + 2] end
  local held = redis.call('HMGET', K_LEASES, unpack(ids))
  local valid = {}
  for i = 1, n do
    if held[i] and held[i] == ARGV[base + (i - 1) * 5 + 3] then
      valid[#valid + 1] = ids[i]
      out[i] = 1
    else
      out[i] = 0
    end
  end
  if #valid == 0 then return out, base + 1 + n * 5 end
  redis.call('HDEL', K_LEASES, unpack(valid))
  redis.call('ZREM', K_WORKING, unpack(valid))

  local drop, done, results, dedup = {}, {}, {}, {}
  for i = 1, n do
    if out[i] == 1 then
      local b = base + (i - 1) * 5 + 1
      local op, id, a1, a2 = ARGV[b], ARGV[b + 1], ARGV[b + 3], ARGV[b + 4]
      if op == 'a' then
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
            meta.r = (meta.r or 0) + 1
            redis.call('HSET', K_JOBS, id, encodeRecord(meta, data))
            local delayMs = tonumber(a2)
            if delayMs > 0 then addDelayed(id, now + delayMs) else pushPending({ id }, { meta.p or 0 }) end
            emit({ type = 'retried', id = id, reason = a1, delayMs = delayMs })
          else
            local meta, data = decodeMeta(rec)
            deadLetter(id, meta, data, now, a1)
          end
        end
      end
    end
  end
  if #drop > 0 then redis.call('HDEL', K_JOBS, unpack(drop)) end
  if #done > 0 then
    redis.call('ZADD', K_DONE, unpack(done))
    redis.call('HSET', K_RESULTS, unpack(results))
  end
  if #dedup > 0 then redis.call('ZADD', K_DEDUP, unpack(dedup)) end
  return out, base + 1 + n * 5
end
