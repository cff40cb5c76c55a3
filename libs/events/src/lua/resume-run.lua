--[[
  Worker side: the owner of a parked run takes the reservation a `wait` made and resumes it.
  Appends `run.resumed` (transcript: the wait input) and publishes `started` in the same step.
  The reservation's token becomes the leg's (`legToken`), and its wait Idempotency-Key record
  (`resumeKey`, reserve-resume) the leg's key (`legKey`). The previous leg's key, if any, is given
  the stream id of that leg's answer (`answerEvent`), since the run's `resultEvent` will now move on.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash, KEYS[4] transcript list,
      KEYS[5] runs index

      ARGV[1] runId
      ARGV[2] token of the reservation
      ARGV[3] workerId
      ARGV[4] epoch the worker holds the run with
      ARGV[5] reply channel ('' for none)
      ARGV[6] wait input JSON (kept verbatim in the event, which the transcript names)

    Output:
      {1, eventId}  resumed ('' as eventId: resumed before with this token, by this worker; a take
                    whose answer was lost is sent again while Redis does not answer)
      {0, status}   not resumed: not waiting, or the reservation is not this token's
      {-3, epoch}   stale epoch (the run's epoch)

    Events:
      run.resumed
]]
--- @include "includes/append"

local runId, token, workerId, epoch = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
local st = run_fields(KEYS[3], { 'status', 'epoch', 'resumeToken', 'legToken', 'owner' })
if st[1] == 'running' and st[4] == token and st[5] == workerId then return { 1, '' } end
if st[1] ~= 'waiting' or st[3] ~= token then return { 0, st[1] or '' } end
if epoch < tonumber(st[2]) then return { -3, st[2] } end

local leg = redis.call('HMGET', KEYS[3], 'legKey', 'resultEvent', 'resumeKey')
if leg[1] and leg[2] and redis.call('EXISTS', leg[1]) == 1 then redis.call('HSETNX', leg[1], 'answerEvent', leg[2]) end
redis.call('HSET', KEYS[3], 'legToken', token)
if leg[3] then redis.call('HSET', KEYS[3], 'legKey', leg[3]) else redis.call('HDEL', KEYS[3], 'legKey') end
redis.call('HDEL', KEYS[3], 'resumeToken', 'resumeUntil', 'resumeKey')
local head = '{"workerId":' .. cjson.encode(workerId) .. ',"epoch":' .. epoch .. '}'
local id = append_event(KEYS, { type = 'run.resumed', runId = runId, epoch = epoch, head = head,
  raws = { { 'input', ARGV[6] } }, facts = { workerId = workerId } })
if ARGV[5] ~= '' then
  redis.call('SPUBLISH', ARGV[5], '{"kind":"started","runId":' .. cjson.encode(runId) ..
    ',"workerId":' .. cjson.encode(workerId) .. '}')
end
return { 1, id }
