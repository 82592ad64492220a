-- Included by credits-seed-2 and credits-orphans-2 (shared/billing/credit-ledger.ts). Adds to a credits hash one
-- committed call a drainer counted after Redis lost its outbox entry: a record 'rev:overage:DD' (usage-outbox.ts
-- orphansKey), applied when the hash was built from an older revision of the usage counter document than `rev`.
-- Returns 1 when applied, else 0.
local function addOrphanedCall(credits, seededRev, record)
  local rev, over, day = string.match(record, '^(%d+):([01]):(%d%d)$')
  if not rev or tonumber(rev) <= seededRev then return 0 end
  redis.call('HINCRBY', credits, 'calls', 1)
  redis.call('HINCRBY', credits, 'used', 1)
  redis.call('HINCRBY', credits, 'd:' .. day, 1)
  if over == '1' then redis.call('HINCRBY', credits, 'overage', 1) end
  return 1
end
