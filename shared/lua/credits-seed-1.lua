-- Seeds a missing credits hash from the durable counts (shared/billing/credit-ledger.ts); a no-op when another
-- process got there first.
-- KEYS[1]: the customer's credits hash for the month.
-- ARGV: used, overage, TTL ms, then pairs of day (DD) and committed calls that day.
-- Returns 1 when seeded, 0 when the hash existed.
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], 'calls', ARGV[1], 'used', ARGV[1], 'overage', ARGV[2])
for i = 4, #ARGV, 2 do redis.call('HSET', KEYS[1], 'd:' .. ARGV[i], ARGV[i + 1]) end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1
