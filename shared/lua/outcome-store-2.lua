-- Stores an unbilled outcome of a job (shared/queues/outcome-store.ts), with its usage event when given. The
-- first stored outcome of a job wins (a re-run after a stall must not overwrite it); the event is appended only
-- with the outcome that is stored.
-- KEYS[1]: result key, KEYS[2]: outbox stream.
-- ARGV: outcome JSON, result TTL ms, reply channel ('' = none), reply head, [request id, event JSON].
-- Returns the stored outcome (also published to the reply channel).
--- @include "publish-stored"
local stored = ARGV[1]
if redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2], 'NX') then
  if ARGV[5] then redis.call('XADD', KEYS[2], '*', 'id', ARGV[5], 'event', ARGV[6], 'overage', '0') end
else
  stored = redis.call('GET', KEYS[1])
end
publishStored(stored, ARGV[3], ARGV[4])
return stored
