--[[
  End a run with its terminal event (`run.completed` or `run.failed`) carrying the result,
  fenced by epoch; exactly one terminal event per run. Publishes the `result` reply after the
  append, so an answer never reports a transition the log does not hold. The session's count of
  failed cells in a row moves with it, and a failed result gets its `repair` (includes/repair.lua);
  a tool call was dispatched when the run recorded a `tool.called`.
  With a claimer (ARGV[13]), the run is claimed here too (SPEC §13: a cell that ended before its
  worker wrote its claim): only a run still `requested` gets `run.started` then its terminal
  event; anything else declines and writes nothing, so a cell the API abandoned meanwhile, or
  one another worker claimed, leaves no trace. No `started` reply: the result says as much.

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
      ARGV[13] the claiming worker's id, '' (or absent) for a run already claimed
      ARGV[14] the trail mark the run's last trailed events left (append-events.lua), '' (or
               absent) for none: an end sent right behind them is written only if they all landed

    Output:
      {1, eventId, repairJson|''}
      {0, status}   with a claimer: not started, the run's current status ('' when there is no run)
      {-1, ''}      run not found
      {-2, status}  run already ended
      {-3, epoch}   stale epoch (the run's epoch)
      {-5, type}    not a finishing type
      {-7, ''}      the trail mark is not on the run: its trailed events were not all written

    Events:
      run.started (with a claimer), then run.completed | run.failed
]]
--- @include "includes/append"
--- @include "includes/run-reply"
--- @include "includes/repair"

local runId, epoch, evType = ARGV[1], tonumber(ARGV[2]), ARGV[3]
if evType ~= 'run.completed' and evType ~= 'run.failed' then return { -5, evType } end
-- An end sent behind trailed events that were refused (the history cap, memory) or did not arrive
-- first writes nothing: its worker waits for them and ends the run as they decide.
local mark = ARGV[14] or ''
if mark ~= '' and redis.call('HGET', KEYS[3], 'trailMark') ~= mark then return { -7, '' } end

local claimer = ARGV[13] or ''
if claimer ~= '' then
  local st = read_run(KEYS, runId)
  if st.status ~= 'requested' then
    -- This worker's own claim and end, sent again after its reply was lost: an end already written.
    if st.status and read_run_fields(KEYS[3], { 'owner' })[1] == claimer then return { -2, st.status } end
    return { 0, st.status or '' }
  end
  if epoch < tonumber(st.epoch) then return { -3, st.epoch } end
  append_event(KEYS, { type = 'run.started', runId = runId, epoch = epoch,
    head = '{"workerId":' .. cjson.encode(claimer) .. ',"epoch":' .. epoch .. '}', raws = {}, facts = { workerId = claimer } })
end

local refused = check_run_write(KEYS, runId, epoch)
if refused then return refused end

local dispatched = read_of(runId).toolCalled
local result, repair, count = repair_decide(KEYS, repair_args(6), evType == 'run.failed', dispatched, ARGV[4])

local id = append_event(KEYS, { type = evType, runId = runId, epoch = epoch, head = '{}',
  raws = { { 'result', result } }, facts = { replaySafe = ARGV[11] },
  packed = ARGV[12] ~= '' and result == ARGV[4] and ARGV[12] or nil })
repair_keep(KEYS, count)
if ARGV[5] ~= '' then
  publish_result(ARGV[5], runId, result)
end
return { 1, id, repair }
