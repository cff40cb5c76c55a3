--[[
  API side of `wait` (and abort): reserves a parked run for one resume. Only a `waiting` run with
  no live reservation is reserved, so two concurrent waits cannot both resume it; a reservation
  whose holder vanished (API crash) lapses at `until`.

  With a wait Idempotency-Key (SPEC §2), the key's record (`<base>:wait-idem:<key>`, hash runId,
  token) is written with the reservation, and the run hash names it as `resumeKey`: resume-run
  makes it the key of the leg, and the leg's answer is found from it later (RunLedger.keyedWait).
  A key already used answers its record instead of reserving, unless it is the record the caller
  saw go stale (ARGV[4]: its token), or its run no longer exists (a deleted session's key).

  A run whose leg's answer is owed to the next wait (`answerOwed`, owe-answer: the call in flight
  answered `waiting` while the leg was rebuilt, SPEC §16) is not reserved: once the leg parked or
  ended, this wait takes the owed answer (the flag goes, so only one wait gets it) and, with a key,
  records it under the key like the answer of a leg it resumed; while it runs, the wait is told so.

    Input:
      KEYS[1] run hash
      KEYS[2] the wait key's record (any name when ARGV[3] is '')

      ARGV[1] token (unique per wait call)
      ARGV[2] reservation lifetime in ms
      ARGV[3] '1' when the wait carries an Idempotency-Key, else ''
      ARGV[4] token of the key's record this call replaces ('' for none)
      ARGV[5] the key's lifetime in ms (at most the session's TTL)

    Output:
      {1, owner, epoch, restartSafe, expiresAt}
                                      reserved (expiresAt: the run's ISO expiry, '' if none)
      {0, status, restartSafe, owner, owed}
                                      not waiting (status of the run, '' when there is no run;
                                      owed '1' when the running leg's answer is owed to a wait)
      {4, status, restartSafe}        the owed answer is this wait's: read it from the run (with a
                                      key: the key's record is written, the run's legToken/legKey
                                      are this wait's)
      {2, 'waiting', restartSafe, heldToken, heldForMs, owner}
                                      already reserved by another wait (being resumed); heldForMs
                                      counts from when that reservation was made, assuming it was
                                      made with the same lifetime (lets a wait spot one whose API
                                      died before it routed the resume)
      {3, runId, token, answerEvent, heldForMs}
                                      the key was used: its run and token, the stream id of its
                                      leg's answer once a later leg began ('' before), and how long
                                      its reservation has been held when it still holds this run
                                      ('' otherwise)

    Events:
      none (the worker appends run.resumed when it really resumes)
]]
--- @define SESSION_TTL_MS
--- @include "includes/ended-run"
-- A finished run's hash kept compact keeps its owner, restartSafe and resultEvent in `ended`.
local st = read_run_fields(KEYS[1], { 'status', 'resumeToken', 'resumeUntil', 'owner', 'epoch', 'restartSafe', 'expiresAt',
  'answerOwed' })
local restartSafe = st[6] or 'false'
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local keyed = ARGV[3] == '1'
local base = string.match(KEYS[1], '^(.*):run:[^:]*$')
local heldFor = function() return tostring(nowMs - (tonumber(st[3]) - tonumber(ARGV[2]))) end

if keyed then
  local rec = redis.call('HMGET', KEYS[2], 'runId', 'token', 'answerEvent')
  if rec[2] and rec[2] ~= ARGV[4] and run_exists(base .. ':run:' .. rec[1]) then
    local held = ''
    if base .. ':run:' .. rec[1] == KEYS[1] and st[2] == rec[2] and st[1] == 'waiting' then held = heldFor() end
    return { 3, rec[1], rec[2], rec[3] or '', held }
  end
end

if st[8] and st[1] and st[1] ~= 'running' then
  redis.call('HDEL', KEYS[1], 'answerOwed')
  if keyed then
    -- The owed answer becomes this wait's, under its key, as if it had resumed the leg: the leg's
    -- token and key are this wait's (a repeat answers from the run, and resume-run gives the key
    -- the answer's event once a later leg begins); the key the leg had gets that event now.
    local leg = read_run_fields(KEYS[1], { 'legKey', 'resultEvent' })
    if leg[1] and leg[2] and redis.call('EXISTS', leg[1]) == 1 then redis.call('HSETNX', leg[1], 'answerEvent', leg[2]) end
    redis.call('DEL', KEYS[2])
    redis.call('HSET', KEYS[2], 'runId', string.match(KEYS[1], ':run:([^:]*)$'), 'token', ARGV[1])
    redis.call('PEXPIRE', KEYS[2], math.min(tonumber(ARGV[5]), SESSION_TTL_MS))
    redis.call('HSET', KEYS[1], 'legToken', ARGV[1], 'legKey', KEYS[2])
  end
  return { 4, st[1], restartSafe }
end
if st[1] ~= 'waiting' then return { 0, st[1] or '', restartSafe, st[4] or '', st[8] or '' } end
if st[2] and tonumber(st[3] or '0') > nowMs then
  return { 2, 'waiting', restartSafe, st[2], heldFor(), st[4] or '' }
end
redis.call('HSET', KEYS[1], 'resumeToken', ARGV[1], 'resumeUntil', nowMs + tonumber(ARGV[2]))
if keyed then
  redis.call('DEL', KEYS[2])
  redis.call('HSET', KEYS[2], 'runId', string.match(KEYS[1], ':run:([^:]*)$'), 'token', ARGV[1])
  redis.call('PEXPIRE', KEYS[2], math.min(tonumber(ARGV[5]), SESSION_TTL_MS))
  redis.call('HSET', KEYS[1], 'resumeKey', KEYS[2])
else
  redis.call('HDEL', KEYS[1], 'resumeKey')
end
return { 1, st[4] or '', st[5] or '0', restartSafe, st[7] or '' }
