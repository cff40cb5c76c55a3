--[[
  Record that a run's tool call waits for an operator's approval (SPEC §11): appends
  `approval.requested` and stores the approval in the session's approvals hash, in one step, so
  an approval is listed exactly when its event is in the log.

    Input:
      KEYS[1..5] the session's append keys (KeySpace.scriptKeys for the run)
      KEYS[6]    approvals hash <p>:{t:sid}:approvals (field approvalId → record JSON,
                 field approvalId .. ':decision' → decision JSON, written by decide-approval,
                 field 'call:' .. runId .. ':' .. callId → approvalId, the call's one approval)

      ARGV[1] runId
      ARGV[2] writer's epoch
      ARGV[3] data head: JSON object text of the event data without `input`
      ARGV[4] approvalId
      ARGV[5] the approval's record JSON (built by the caller, stored verbatim, never decoded)
      ARGV[6] callId
      ARGV[7] n, then n pairs (name, JSON) spliced into the data (the call's `input`)

    Output:
      {1, eventId}
      {-1, ''}      run not found
      {-2, status}  run already ended
      {-3, epoch}   stale epoch

    Events:
      approval.requested
]]
--- @include "includes/append"

local raws, facts = read_raws_and_facts(7)
local ev = { type = 'approval.requested', runId = ARGV[1], epoch = tonumber(ARGV[2]), head = ARGV[3], raws = raws, facts = facts }

local refused = check_run_write(KEYS, ev.runId, ev.epoch)
if refused then return refused end

local id = append_event(KEYS, ev)
redis.call('HSET', KEYS[6], ARGV[4], ARGV[5], 'call:' .. ARGV[1] .. ':' .. ARGV[6], ARGV[4])
redis.call('PEXPIRE', KEYS[6], int(session_ttl_ms))
return { 1, id }
