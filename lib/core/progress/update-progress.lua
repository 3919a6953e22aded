--[[
  Stores a job's progress, from the handler that holds its lease (lib/core/progress/progress.ts).
  Only the current token of a job writes: a stale lease changes nothing.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      events: '1' to publish them (only while someone listens), '0' not
    ARGV[2]      id: the job's id
    ARGV[3]      token: the lease token
    ARGV[4]      json: the progress, JSON (a number, an object or an array)

  Output:
    1 stored, 0 when that token no longer holds the job

  Events:
    progress (its JSON as a string: a decode and re-encode here would change it)
]]
eventsArg = ARGV[1] == '1'
local id = ARGV[2]
if redis.call('HGET', K_LEASES, id) ~= ARGV[3] then return 0 end
redis.call('HSET', K_PROGRESS, id, ARGV[4])
markNotes()
emit({ type = 'progress', id = id, progress = ARGV[4] })
flushEvents()
return 1
