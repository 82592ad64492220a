-- Records the calls a drainer counted after Redis lost their outbox entries (shared/billing/credit-ledger.ts,
-- addOrphanedCalls), and adds them to the month's credits hash when it exists and was built from a revision of the
-- usage counter document older than the one that holds them. A hash seeded later reads the records
-- (credits-seed-2): each call reaches the hash once, whichever step comes first.
-- KEYS[1]: the customer's credits hash for the month. KEYS[2]: its orphaned calls of the month (request id ->
--   'rev:overage:DD').
-- ARGV: the document's revision once it held the calls, TTL ms of the records, then pairs of request id and
--   'overage:DD' ('0'/'1').
-- Returns the number of calls added to the hash.
--- @include "add-orphaned-call"
local exists = redis.call('EXISTS', KEYS[1]) == 1
local seededRev = tonumber(redis.call('HGET', KEYS[1], 'rev') or '-1')
local added = 0
for i = 3, #ARGV, 2 do
  local record = ARGV[1] .. ':' .. ARGV[i + 1]
  if redis.call('HSETNX', KEYS[2], ARGV[i], record) == 1 and exists then added = added + addOrphanedCall(KEYS[1], seededRev, record) end
end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return added
