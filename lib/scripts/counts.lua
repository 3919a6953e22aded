-- Per-state counts, read atomically. Reply: { pending, working, delayed, completed, dead, paused, ghosts }
return {
  redis.call('LLEN', K_PENDING) + redis.call('ZCARD', K_PRIO) + (tonumber(redis.call('HGET', K_META, 'gp')) or 0),
  redis.call('ZCARD', K_WORKING),
  redis.call('ZCARD', K_DELAYED),
  redis.call('ZCARD', K_DONE),
  redis.call('ZCARD', K_DEAD),
  redis.call('HEXISTS', K_META, 'paused'),
  tonumber(redis.call('HGET', K_META, 'ghosts')) or 0,
}
