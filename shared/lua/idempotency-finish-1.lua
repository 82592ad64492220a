-- Finishes an Idempotency-Key's entry (api/liveness/idempotency.ts). Only the claiming request finishes its entry;
-- without a response a pending entry is freed, a committed one kept (it holds the billed answer).
-- KEYS[1]: the entry.
-- ARGV: request id, response JSON ('' = none), TTL ms.
-- Returns 1 when this request owns the entry, else 0.
if redis.call('HGET', KEYS[1], 'rid') ~= ARGV[1] then return 0 end
if ARGV[2] == '' then
  if redis.call('HGET', KEYS[1], 'state') == 'pending' then redis.call('DEL', KEYS[1]) end
  return 1
end
redis.call('HSET', KEYS[1], 'state', 'done', 'response', ARGV[2])
redis.call('HDEL', KEYS[1], 'outcome')
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
