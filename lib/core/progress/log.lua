--[[
  Appends a line to a job's log, from the handler that holds its lease
  (lib/core/progress/progress.ts). Only the last `maxLines` lines are kept: the job's own
  keepLogs (meta kl), else the queue's maxLogLines. Only the current
  token of a job writes: a stale lease changes nothing. Each line carries its writer's mark
  and a number that only grows within that writer, so a call replayed after a lost reply
  does not append it twice.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      id: the job's id
    ARGV[3]      token: the lease token
    ARGV[4]      writer: the writing process's mark (no spaces)
    ARGV[5]      n: the line's number among that writer's lines
    ARGV[6]      line: the line
    ARGV[7]      maxLines: most lines kept for the job (older ones are dropped): its keepLogs
                 as its lease carries it, else the queue's maxLogLines
    ARGV[8]      fromRecord: '1' for a lease rebuilt from its id and token, which does not
                 carry the job's keepLogs: its record is read for it (maxLines when none)

  Output:
    the number of lines the job keeps now, 0 when that token no longer holds the job

  Events:
    log
]]
eventsArg = ARGV[1] == '1'
local id = ARGV[2]
if redis.call('HGET', K_LEASES, id) ~= ARGV[3] then return 0 end
local key = logKey(id)
local writer, n, token = ARGV[4], tonumber(ARGV[5]), ARGV[3]
local last = redis.call('HGET', K_LOGGED, id)
if last then
  local lastN, lastWriter, lastToken = string.match(last, '^(%d+) (%S+) (.*)$')
  if lastWriter == writer and lastToken == token and tonumber(lastN) >= n then return redis.call('LLEN', key) end -- a replay
end
local kept = redis.call('RPUSH', key, ARGV[6])
markNotes()
redis.call('HSET', K_LOGGED, id, n .. ' ' .. writer .. ' ' .. token)
local max = tonumber(ARGV[7])
if ARGV[8] == '1' then
  local rec = redis.call('HGET', K_JOBS, id)
  max = rec and metaInt(metaPart(rec), 'kl') or max
end
if kept > max then
  redis.call('LTRIM', key, -max, -1)
  kept = max
end
emit({ type = 'log', id = id, line = ARGV[6] })
flushEvents()
return kept
