--[[
  API side: a run no worker started within its budget is ended with `run.failed`, so it can never
  start later. Races with start-run.lua; both test `requested` atomically, so exactly one wins.
  A cell that never ran does not consume its exec Idempotency-Key (SPEC §2): with ARGV[3], the
  key is given back when it still names this run, so a repeat runs the cell instead of answering
  "not run" for a day. The run's caller (`replyTo`, recorded by request-run.lua) is answered with
  the result at once: an abort of a cell still waiting for a worker frees its exec then, not when
  a worker reaches the cell or at the exec's start budget. The exec that abandons its own run
  answers it itself (ARGV[5] ''): nothing is published then.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash, KEYS[4] transcript list,
      KEYS[5] runs index, KEYS[6] the exec's idempotency key (any name when ARGV[3] is '')

      ARGV[1] runId
      ARGV[2] result: CodeModeResult JSON (kept verbatim)
      ARGV[3] '1' to give the idempotency key back, else ''
      ARGV[4] the result's replaySafe, 'true' | 'false' (kept on the run hash for listings)
      ARGV[5] '1' to publish the result to the run's caller, '' when that caller abandons it

    Output:
      {1, eventId}  abandoned
      {0, status}   not abandoned; the run's current status ('' when there is no run)

    Events:
      run.failed
]]
--- @include "includes/append"
--- @include "includes/run-reply"

local runId = ARGV[1]
local st = run_fields(KEYS[3], { 'status', 'epoch', 'replyTo' })
if st[1] ~= 'requested' then return { 0, st[1] or '' } end

local id = append_event(KEYS, { type = 'run.failed', runId = runId, epoch = tonumber(st[2]), head = '{}',
  raws = { { 'result', ARGV[2] } }, facts = { replaySafe = ARGV[4] } })
if ARGV[3] == '1' and redis.call('GET', KEYS[6]) == runId then redis.call('DEL', KEYS[6]) end
if st[3] and ARGV[5] == '1' then
  publish_result(st[3], runId, ARGV[2])
end
return { 1, id }
