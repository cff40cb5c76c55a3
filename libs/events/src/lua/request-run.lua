--[[
  Request a run: create the session if missing, the run hash (status requested), the transcript
  input mark and the `run.requested` event. With an idempotency key, a repeated request appends
  nothing and answers the first runId.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash, KEYS[4] transcript list,
      KEYS[5] runs index, KEYS[6] idempotency key ('' key name unused when ARGV[3] is '')

      ARGV[1] runId
      ARGV[2] data head: RunRequestedData JSON without title and code
      ARGV[3] idempotency key ('' for none)
      ARGV[4] idempotency TTL in seconds (at most: never longer than the session's TTL)
      ARGV[5] the session's configVersion the request's limits were computed from ('' not to check;
              '0' for a session never configured)
      ARGV[6] the event's data packed (event-packing.ts), '' to keep it as spliced
      ARGV[7] n (2), then raws (title, JSON string) (code, JSON string), then facts
              restartSafe ('true'|'false')
              replyTo (optional): the channel its caller's answer is published to, kept on the run
                      hash until it is claimed or ends, so abandon-run.lua can answer that caller
              (the run hash keeps title as JSON text, exact for any string)

    Output:
      {1, eventId}  created
      {0, runId}    idempotency key already used in this session: the first request's runId
      {2, version}  the session's settings changed since ARGV[5]: nothing written; read them again
      {-4, runId}   a run with this id exists

    Events:
      run.requested
]]
--- @include "includes/append"

local runId = ARGV[1]
local idemKey = ARGV[3]
if idemKey ~= '' then
  local first = redis.call('GET', KEYS[6])
  -- A key outliving its session (deleted, DELETE /v1/sessions/{sid}) names a run that is gone.
  if first and redis.call('EXISTS', KEYS[2]) == 1 then return { 0, first } end
end
if run_exists(KEYS[3]) then return { -4, runId } end
if ARGV[5] ~= '' then
  local version = redis.call('HGET', KEYS[2], 'configVersion') or '0'
  if version ~= ARGV[5] then return { 2, version } end
end

local raws, facts = read_raws_and_facts(7)
local id = append_event(KEYS, { type = 'run.requested', runId = runId, epoch = 0, head = ARGV[2], raws = raws, facts = facts,
  packed = ARGV[6] ~= '' and ARGV[6] or nil })
if idemKey ~= '' then
  redis.call('SET', KEYS[6], runId, 'PX', int(math.min(tonumber(ARGV[4]) * 1000, session_ttl_ms)))
end
return { 1, id }
