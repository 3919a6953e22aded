-- Every relq function receives the same queue keys, in the order of QUEUE_KEYS in
-- lib/core/redis/keys.ts (bound to these names per call by begin(), include/begin.lua). All
-- share the queue's hash tag, so a call touches one slot.
local KEYS, ARGV            -- this call's keys and arguments
local K_JOBS                -- hash  id -> record ("<meta json>\n<data json>")
local K_PENDING             -- list  ids of priority 0, FIFO (RPUSH / LPOP)
local K_PRIO                -- zset  ids with a non-zero priority, by (-priority, seq)
local K_DELAYED             -- zset  id -> due time (ms, Redis clock)
local K_WORKING             -- zset  id -> lease deadline (ms)
local K_LEASES              -- hash  id -> current lease token (the fence)
local K_DONE                -- zset  completed id -> time its retention ends
local K_RESULTS             -- hash  completed id -> {"at":ms,"a":attempt,"r":result}
local K_DEAD                -- zset  dead-lettered id -> time of death
local K_META                -- hash  queue flags: paused, nextDue
local K_WAKE                -- list  wake-up tokens for blocked leasers (BLPOP)
local K_DEDUP               -- zset  finished custom job id -> end of its idempotency window
local K_EVENTS              -- sharded pub/sub channel of job transitions
local K_SEQ                 -- string sequence for FIFO order among prioritized jobs
local K_LISTEN              -- string present while some process listens to K_EVENTS (expires)
