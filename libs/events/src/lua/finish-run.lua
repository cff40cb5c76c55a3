--[[
  End a run with its terminal event (`run.completed` or `run.failed`) carrying the result,
  fenced by epoch; exactly one terminal event per run. Publishes the `result` reply after the
  append, so an answer never reports a transition the log does not hold. The session's count of
  failed cells in a row moves with it, and a failed result gets its `repair` (includes/repair.lua);
  a tool call was dispatched when the run recorded a `tool.called`.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash, KEYS[4] transcript list,
      KEYS[5] runs index

      ARGV[1] runId
      ARGV[2] writer's epoch
      ARGV[3] 'run.completed' | 'run.failed'
      ARGV[4] result: CodeModeResult JSON (kept verbatim)
      ARGV[5] reply channel ('' for none)
      ARGV[6..10] repair: mode, default repairAttempts, reasons (includes/repair.lua)
      ARGV[11] the result's replaySafe, 'true' | 'false' (kept on the run hash for listings)
      ARGV[12] the event's data `{"result":ARGV[4]}` packed (event-packing.ts), '' for none: kept
               only when the result is stored as given (a failure's repair rewrites it)

    Output:
      {1, eventId, repairJson|''}
      {-1, ''}      run not found
      {-2, status}  run already ended
      {-3, epoch}   stale epoch (the run's epoch)
      {-5, type}    not a finishing type

    Events:
      run.completed | run.failed
]]
--- @include "includes/append"
--- @include "includes/repair"

local runId, epoch, evType = ARGV[1], tonumber(ARGV[2]), ARGV[3]
if evType ~= 'run.completed' and evType ~= 'run.failed' then return { -5, evType } end

local refused = check_run_write(KEYS, runId, epoch)
if refused then return refused end

local dispatched = read_of(runId).toolCalled
local result, repair, count = repair_decide(KEYS, repair_args(6), evType == 'run.failed', dispatched, ARGV[4])

local id = append_event(KEYS, { type = evType, runId = runId, epoch = epoch, head = '{}',
  raws = { { 'result', result } }, facts = { replaySafe = ARGV[11] },
  packed = ARGV[12] ~= '' and result == ARGV[4] and ARGV[12] or nil })
repair_keep(KEYS, count)
if ARGV[5] ~= '' then
  redis.call('SPUBLISH', ARGV[5], '{"kind":"result","runId":' .. cjson.encode(runId) .. ',"result":' .. result .. '}')
end
return { 1, id, repair }
