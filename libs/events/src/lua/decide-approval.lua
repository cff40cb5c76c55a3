--[[
  Record an operator's decision on a pending approval (SPEC §11), once: appends
  `approval.decided` at the run's current epoch (a decision is no worker's write, so whoever holds
  the run then applies it) and stores the decision next to the approval.

    Input:
      KEYS[1..5] the session's append keys (KeySpace.scriptKeys for the approval's run)
      KEYS[6]    approvals hash <p>:{t:sid}:approvals

      ARGV[1] approvalId
      ARGV[2] runId the caller read from the approval's record
      ARGV[3] data head: JSON object text of the event data
      ARGV[4] the decision JSON (built by the caller, stored verbatim, never decoded)

    Output:
      {1, eventId}
      {-10, ''}       no such approval in this session (or not of this run)
      {-11, ''}       already decided
      {-1, ''}        run not found
      {-2, status}    run already ended: its pending approvals are void

    Events:
      approval.decided
]]
--- @include "includes/append"

if redis.call('HEXISTS', KEYS[6], ARGV[1]) == 0 then return { -10, '' } end
if redis.call('HEXISTS', KEYS[6], ARGV[1] .. ':decision') == 1 then return { -11, '' } end

local epoch = tonumber(run_fields(KEYS[3], { 'epoch' })[1] or '0')
local ev = { type = 'approval.decided', runId = ARGV[2], epoch = epoch, head = ARGV[3], raws = {}, facts = {} }
local refused = check_run_write(KEYS, ev.runId, ev.epoch)
if refused then return refused end

local id = append_event(KEYS, ev)
redis.call('HSET', KEYS[6], ARGV[1] .. ':decision', ARGV[4])
redis.call('PEXPIRE', KEYS[6], int(session_ttl_ms))
return { 1, id }
