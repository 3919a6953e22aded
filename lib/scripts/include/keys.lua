-- Every relq script receives the same queue keys, in the order of QUEUE_KEYS in
-- lib/core/keys.ts. All share the queue's hash tag, so a script touches one slot.
local K_JOBS = KEYS[1]      -- hash  id -> record ("<meta json>\n<data json>")
local K_PENDING = KEYS[2]   -- list  ids of priority 0, FIFO (RPUSH / LPOP)
local K_PRIO = KEYS[3]      -- zset  ids with a non-zero priority, by (-priority, seq)
local K_DELAYED = KEYS[4]   -- zset  id -> due time (ms, Redis clock)
local K_WORKING = KEYS[5]   -- zset  id -> lease deadline (ms)
local K_LEASES = KEYS[6]    -- hash  id -> current lease token (the fence)
local K_DONE = KEYS[7]      -- zset  completed id -> time its retention ends
local K_RESULTS = KEYS[8]   -- hash  completed id -> {"at":ms,"a":attempt,"r":result}
local K_DEAD = KEYS[9]      -- zset  dead-lettered id -> time of death
local K_META = KEYS[10]     -- hash  queue flags: paused, nextDue
local K_WAKE = KEYS[11]     -- list  wake-up tokens for blocked leasers (BLPOP)
local K_DEDUP = KEYS[12]    -- zset  finished custom job id -> end of its idempotency window
local K_EVENTS = KEYS[13]   -- sharded pub/sub channel of job transitions
local K_SEQ = KEYS[14]      -- string sequence for FIFO order among prioritized jobs
local K_LISTEN = KEYS[15]   -- string present while some process listens to K_EVENTS (expires)
