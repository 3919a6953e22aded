--[[
  Reads one job (lib/core/management/inspector.ts getJob()). Read-only: it still runs when Redis
  refuses writes.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      id: the job's id

  Output:
    {} when there is no such job, or it completed and its retention has ended (whether or
    not a sweep removed it yet); else { state, record, score, result, progress, children, started, lines... }:
      'working',   record, lease deadline (ms; '' when missing from working)
      'delayed',   record, due time (ms)
      'completed', record, end of its retention (ms)
      'dead',      record, time of death (ms)
      'pending',   record, ''
      'waiting-children', record, time it began waiting (a parent, flows/flows.lua)
    Scores are bulk strings, as ZSCORE answers them. result: a completed job's
    '{"at":ms,"d":ms since its lease began,"r":json or null}', else '' (also when none was
    kept); progress: its JSON, '' when none; children: a parent's,
    '{"unfinished":n,"results":{id:json,...},"failed":{id:error,...}}' ('' for a job without
    children, flows/flows.lua); started: a working job's lease start (ms,
    redis/lease-token.lua), else ''; lines: its log lines, oldest first (progress/progress.lua).
]]
local id = ARGV[1]
local rec = redis.call('HGET', K_JOBS, id)
if not rec then return {} end
local state, score = locateJob(id) -- management/remove.lua
local result = ''
if state == 'completed' then
  -- past its retention it is gone, whether or not a sweep removed it yet
  if tonumber(score) <= nowMs() then return {} end
  result = redis.call('HGET', K_RESULTS, id) or ''
end
-- a parent's children (flows/flows.lua): '{"unfinished":n,"results":{id:json,...},"failed":{id:error,...}}', else ''
local children = ''
if flowBit(metaInt(rec, 'w'), 2) then
  local parts = {}
  local kv = redis.call('HGETALL', kresKey(id))
  for i = 1, #kv, 2 do parts[#parts + 1] = cjson.encode(kv[i]) .. ':' .. kv[i + 1] end
  local failed = redis.call('HGETALL', kfailKey(id))
  local fparts = {}
  for i = 1, #failed, 2 do
    -- '\n' is no child: what a running parent learns when it waits (flows/flows.lua runningParents.mark)
    if failed[i] ~= '\n' then fparts[#fparts + 1] = cjson.encode(failed[i]) .. ':' .. cjson.encode(failed[i + 1]) end
  end
  children = '{"unfinished":' .. redis.call('SCARD', depsKey(id)) .. ',"results":{' .. table.concat(parts, ',') .. '},"failed":{' .. table.concat(fparts, ',') .. '}}'
end
local started = ''
if state == 'working' then started = leaseStart(redis.call('HGET', K_LEASES, id) or '') or '' end
local out = { state, rec, score, result, '', children, started }
if redis.call('HEXISTS', K_META, 'notes') == 1 then -- one HEXISTS while no handler wrote any
  out[5] = redis.call('HGET', K_PROGRESS, id) or ''
  for _, line in ipairs(redis.call('LRANGE', logKey(id), 0, -1)) do out[#out + 1] = line end
end
return out
