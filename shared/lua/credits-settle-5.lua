-- The worker's one step after the engine (shared/billing/credit-ledger.ts). With the reservation present, it
-- commits the credit, stores the answer (carrying the committed counts) and appends the usage event: all or
-- nothing. Without it (the API released it when it gave up, or this job was committed before), nothing is billed
-- and the first stored outcome stays. Either way the stored outcome is published to the reply channel in the same step.
-- KEYS[1]: credits hash, KEYS[2]: result key, KEYS[3]: outbox stream, KEYS[4]: the caller's idempotency entry, or
--   the credits hash again when the call has none (a declared key in the same slot; the script skips it),
--   KEYS[5]: the customer's undrained billed calls of the month (request id -> 'overage:DD'; usage-outbox.ts), which
--   the drainer empties as it writes them and which outlives the credits hash as long as it would.
-- ARGV: request id, limit, hard cap ('1'/'0'), day (DD of the reservation), result JSON, worker ms, result TTL ms,
--   event JSON, abandoned outcome JSON, idempotency TTL ms, reply channel ('' = none), reply head.
-- Returns {committed (1/0), stored outcome}.
--- @include "publish-stored"
local credits, resultKey, outbox, idem, undrained = KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5]
local rid, limit, capped, day = ARGV[1], tonumber(ARGV[2]), ARGV[3] == '1', ARGV[4]
if redis.call('HDEL', credits, 'p:' .. rid) == 0 then
  redis.call('SET', resultKey, ARGV[9], 'PX', ARGV[7], 'NX')
  local stored = redis.call('GET', resultKey)
  publishStored(stored, ARGV[11], ARGV[12])
  return {0, stored}
end
local used = redis.call('HINCRBY', credits, 'used', 1)
redis.call('HINCRBY', credits, 'd:' .. day, 1)
local over = 0
if (not capped) and used > limit then
  redis.call('HINCRBY', credits, 'overage', 1)
  over = 1
end
local overageCalls = tonumber(redis.call('HGET', credits, 'overage') or '0')
local remaining = math.max(0, limit - used)
local usage = '{"remaining":' .. remaining .. ',"overLimit":' .. overageCalls .. ',"monthlyLimit":' .. limit ..
  ',"used":' .. used .. ',"overage":' .. (over == 1 and 'true' or 'false') .. '}'
local outcome = '{"ok":true,"value":{"result":' .. ARGV[5] .. ',"usage":' .. usage .. '},"workerMs":' .. ARGV[6] .. '}'
redis.call('SET', resultKey, outcome, 'PX', ARGV[7])
redis.call('XADD', outbox, '*', 'id', rid, 'event', ARGV[8], 'overage', tostring(over))
redis.call('HSET', undrained, rid, tostring(over) .. ':' .. day)
local creditsTtl = redis.call('PTTL', credits)
if creditsTtl > 0 then redis.call('PEXPIRE', undrained, creditsTtl) end
if idem ~= credits and redis.call('HGET', idem, 'rid') == rid and redis.call('HGET', idem, 'state') == 'pending' then
  redis.call('HSET', idem, 'state', 'committed', 'outcome', outcome)
  redis.call('PEXPIRE', idem, ARGV[10])
end
publishStored(outcome, ARGV[11], ARGV[12])
return {1, outcome}
