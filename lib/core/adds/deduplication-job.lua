--[[
  The job holding a deduplication id (lib/core/adds/producer.ts getDeduplicationJobId(),
  adds/deduplication.lua): the job whose add took it, while it holds it (a throttle window not
  over; a job not ended and not removed). Read-only.

  Input:
    KEYS[1..15]  the queue keys (redis/keys.lua)

    ARGV[1]      id: the deduplication id

  Output:
    the job's id, or nil when no job holds the id
]]
return dedupIds.holder(ARGV[1], nowMs) or false
