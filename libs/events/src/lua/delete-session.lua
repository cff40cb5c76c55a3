--[[
  Delete a session and everything of it in its slot (`DELETE /v1/sessions/{sid}`, SPEC §10): the
  log and its finished runs' records, the projections, the store, the client tools, the skills, the policy, the approvals, every run hash and
  parked image of the runs its runs index names, every results reference with its bookkeeping, and
  every MCP task its tasks index names (SPEC §14 Tasks) with the index and the wait counters.
  The caller aborts the session's live runs first (a run's end stays with the abort path); a
  worker's late write to a deleted run is refused by check_run_write (run not found). Idempotency
  keys are left to expire: request-run ignores one whose session is gone.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] transcript, KEYS[4] runs index,
      KEYS[5] store hash, KEYS[6] client tools, KEYS[7] session policy, KEYS[8] approvals,
      KEYS[9] results index, KEYS[10] results sizes, KEYS[11] stored log, KEYS[12] stored minutes,
      KEYS[13] skill descriptions, KEYS[14] skill contents, KEYS[15] MCP tasks index,
      KEYS[16] MCP task wait counters

    Output:
      {existed, keysDeleted}  existed 1 when the session hash was there

    Events:
      none (the log itself goes)
]]
local BATCH = 500
local base = string.sub(KEYS[2], 1, -#':session' - 1)
local existed = redis.call('EXISTS', KEYS[2])
local deleted = 0

local function del_all(keys)
  for i = 1, #keys, BATCH do
    deleted = deleted + redis.call('DEL', unpack(keys, i, math.min(i + BATCH - 1, #keys)))
  end
end

local owned = {}
for _, runId in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
  owned[#owned + 1] = base .. ':run:' .. runId
  owned[#owned + 1] = base .. ':image:' .. runId
end
for _, id in ipairs(redis.call('ZRANGE', KEYS[9], 0, -1)) do
  owned[#owned + 1] = base .. ':results:item:' .. id
end
for _, taskId in ipairs(redis.call('ZRANGE', KEYS[15], 0, -1)) do
  owned[#owned + 1] = base .. ':mcp-task:' .. taskId
end
owned[#owned + 1] = base .. ':past'
owned[#owned + 1] = base .. ':past-cut'
owned[#owned + 1] = base .. ':followed'
del_all(owned)
del_all(KEYS)
return { existed, deleted }
