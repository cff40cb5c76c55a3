--[[
  API side (SPEC §16): an `exec` or `wait` whose restartSafe leg did not answer within its budget
  plus the reply grace (its worker died and the leg is being rebuilt, or it is slow) answers
  `waiting` with the runId instead, and the leg's outcome is owed to the next `wait`
  (reserve-resume answers it from the run once the leg parked or ended). Only a run still
  `running` owes an answer; one that parked or ended meanwhile is answered from the run.

    Input:
      KEYS[1] run hash

    Output:
      {1, ''}       the answer is owed (the run is still running)
      {0, status}   not running ('' when there is no run): answer from the run

    Events:
      none
]]
--- @include "includes/run-record"

local status = run_fields(KEYS[1], { 'status' })[1]
if status == 'running' then
  redis.call('HSET', KEYS[1], 'answerOwed', '1')
  return { 1, '' }
end
return { 0, status or '' }
