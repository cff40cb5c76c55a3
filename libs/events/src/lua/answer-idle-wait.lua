--[[
  SPEC §18 "A wait with nothing to do answers at once": records a wait on a parked run that waits
  only for the platform's answers (awaitsOnlyPlatform, decided by the caller from what it read) as
  `run.waited`, with transcript input and result entries, without reserving or resuming the run.
  The caller's decision holds only for the run as it read it: the append happens only if the run is
  still `waiting`, its last event is still the one the caller saw (`lastEvent`, projections.lua: a
  platform answer, an approval decision or a resume since would have moved it), no wait holds a
  live reservation and no leg's answer is owed to a wait. Otherwise nothing is written and the
  caller takes the ordinary path (reserve-resume).

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash, KEYS[4] transcript list,
      KEYS[5] runs index

      ARGV[1] runId
      ARGV[2] the run's `lastEvent` as the caller read it
      ARGV[3] n, then n pairs (name, JSON) spliced into the data (input: the wait's, result: its
              waiting answer), then (name, value) fact pairs (none)

    Output:
      {1, eventId}  answered
      {0, ''}       the run moved on, or is held: take the ordinary path

    Events:
      run.waited
]]
--- @include "includes/append"

local st = redis.call('HMGET', KEYS[3], 'status', 'lastEvent', 'resumeToken', 'resumeUntil', 'answerOwed', 'epoch')
if st[1] ~= 'waiting' or st[2] ~= ARGV[2] or st[5] then return { 0, '' } end
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if st[3] and tonumber(st[4] or '0') > nowMs then return { 0, '' } end
local epoch = tonumber(st[6] or '0')
local refused = check_run_write(KEYS, ARGV[1], epoch)
if refused then return { 0, '' } end
local raws, facts = read_raws_and_facts(3)
local id = append_event(KEYS, { type = 'run.waited', runId = ARGV[1], epoch = epoch, head = '{}', raws = raws, facts = facts })
return { 1, id }
