-- Returns a reservation's credit (shared/billing/credit-ledger.ts).
-- KEYS[1]: the customer's credits hash for the month.
-- ARGV: request id.
-- Returns 1 when released, 0 when the reservation is gone (the worker committed it, or it was released before).
if redis.call('HDEL', KEYS[1], 'p:' .. ARGV[1]) == 0 then return 0 end
redis.call('HINCRBY', KEYS[1], 'calls', -1)
return 1
