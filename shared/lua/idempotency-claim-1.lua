-- Claims an Idempotency-Key for a request (api/liveness/idempotency.ts), or reads what the key holds.
-- KEYS[1]: the entry (hash: bodyHash, state, rid, response, outcome).
-- ARGV: body hash, request id, pending TTL ms.
-- Returns {'new'} when claimed, else the entry's {bodyHash, state, response, outcome}.
if redis.call('EXISTS', KEYS[1]) == 0 then
  redis.call('HSET', KEYS[1], 'bodyHash', ARGV[1], 'state', 'pending', 'rid', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[3])
  return {'new'}
end
return redis.call('HMGET', KEYS[1], 'bodyHash', 'state', 'response', 'outcome')
