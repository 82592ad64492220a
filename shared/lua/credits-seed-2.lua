-- Seeds a missing credits hash from the durable counts (shared/billing/credit-ledger.ts); a no-op when another
-- process got there first. The hash keeps the revision of the usage counter document it was built from (`rev`),
-- and takes the month's orphaned calls (KEYS[2]) that document did not hold yet.
-- KEYS[1]: the customer's credits hash for the month. KEYS[2]: its orphaned calls of the month (usage-outbox.ts
--   orphansKey: request id -> 'rev:overage:DD').
-- ARGV: used, overage, TTL ms, the document's revision (0: none), then pairs of day (DD) and committed calls that day.
-- Returns 1 when seeded, 0 when the hash existed.
--- @include "add-orphaned-call"
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local rev = tonumber(ARGV[4])
redis.call('HSET', KEYS[1], 'calls', ARGV[1], 'used', ARGV[1], 'overage', ARGV[2], 'rev', ARGV[4])
for i = 5, #ARGV, 2 do redis.call('HSET', KEYS[1], 'd:' .. ARGV[i], ARGV[i + 1]) end
local orphans = redis.call('HVALS', KEYS[2])
for _, record in ipairs(orphans) do addOrphanedCall(KEYS[1], rev, record) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
