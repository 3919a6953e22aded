--[[
  Removes a job's log lines, or all but its last `keep` (lib/core/progress/progress.ts
  clearLogs(): BullMQ's clearLogs), whatever the job's state. The mark of its last line stays
  (K_LOGGED, progress/progress.lua): a line sent again after a lost reply is still not
  appended twice, and the mark goes with the job. Cost: O(lines removed).

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      id: the job's id
    ARGV[2]      keep: lines kept, the last ones (0: none)

  Output:
    the number of lines removed
]]
local key = logKey(ARGV[1])
local keep = tonumber(ARGV[2])
local len = redis.call('LLEN', key)
if len <= keep then return 0 end
if keep == 0 then redis.call('DEL', key) else redis.call('LTRIM', key, -keep, -1) end
return len - keep
