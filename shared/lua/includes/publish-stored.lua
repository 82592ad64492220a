-- Included by the scripts that store a job's outcome (outcome-store-2: shared/queues/outcome-store.ts; credits-settle-5).
-- Publishes the stored outcome in the same step as the store: `head .. stored .. '}'` on `channel` (the waiting
-- API process's reply channel; job-runner.ts writes the head). An empty channel publishes nothing.
local function publishStored(stored, channel, head)
  if channel ~= '' then redis.call('PUBLISH', channel, head .. stored .. '}') end
end
