--[[
  A worker claims a run. Only a run still `requested` starts: a run the API has abandoned (or one
  another worker took) is never run later. Publishes the `started` reply after the append.
  Safe to retry: a claim whose reply was lost (a timeout; Redis may still have run it) is sent
  again with the same claim token and answers started, without a second `run.started`.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash, KEYS[4] transcript list,
      KEYS[5] runs index

      ARGV[1] runId
      ARGV[2] workerId
      ARGV[3] epoch the worker holds the run with
      ARGV[4] reply channel ('' for none)
      ARGV[5] recovery facts JSON ('' for none): a restartSafe run's random seed and catalog hash
      ARGV[6] claim token, unique per claim and the same for its retries ('' for none)

    Output:
      {1, eventId}  started ('' as eventId: started before by this claim token)
      {0, status}   not started; status is the run's current status ('' when there is no run)
      {-3, epoch}   stale epoch (the run's epoch)

    Events:
      run.started
]]
--- @include "includes/append"

local runId, workerId, epoch = ARGV[1], ARGV[2], tonumber(ARGV[3])
local claimToken = ARGV[6] or ''
local st = read_run(KEYS, runId)
if st.status == 'running' and claimToken ~= '' and st.claimToken == claimToken then return { 1, '' } end
if st.status ~= 'requested' then return { 0, st.status or '' } end
if epoch < tonumber(st.epoch) then return { -3, st.epoch } end

local head = '{"workerId":' .. cjson.encode(workerId) .. ',"epoch":' .. epoch .. '}'
local raws = {}
if ARGV[5] and ARGV[5] ~= '' then raws = { { 'recovery', ARGV[5] } } end
local id = append_event(KEYS, { type = 'run.started', runId = runId, epoch = epoch, head = head, raws = raws,
  facts = { workerId = workerId, claimToken = claimToken ~= '' and claimToken or nil } })
if ARGV[4] ~= '' then
  redis.call('SPUBLISH', ARGV[4], '{"kind":"started","runId":' .. cjson.encode(runId) ..
    ',"workerId":' .. cjson.encode(workerId) .. '}')
end
return { 1, id }
