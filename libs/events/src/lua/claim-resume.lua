--[[
  API side of `wait` (and abort): reserves a parked run for one resume. Only a `waiting` run with
  no live reservation is reserved, so two concurrent waits cannot both resume it; a reservation
  whose holder vanished (API crash) lapses at `until`.

    Input:
      KEYS[1] run hash

      ARGV[1] token (unique per wait call)
      ARGV[2] reservation lifetime in ms

    Output:
      {1, owner, epoch, restartSafe, expiresAt}
                                      reserved (expiresAt: the run's ISO expiry, '' if none)
      {0, status, restartSafe, owner} not waiting (status of the run, '' when there is no run)
      {2, 'waiting', restartSafe, heldToken, heldForMs, owner}
                                      already reserved by another wait (being resumed); heldForMs
                                      counts from when that reservation was made, assuming it was
                                      made with the same lifetime (lets a wait spot one whose API
                                      died before it routed the resume)

    Events:
      none (the worker appends run.resumed when it really resumes)
]]
local st = redis.call('HMGET', KEYS[1], 'status', 'resumeToken', 'resumeUntil', 'owner', 'epoch', 'restartSafe', 'expiresAt')
local restartSafe = st[6] or 'false'
if st[1] ~= 'waiting' then return { 0, st[1] or '', restartSafe, st[4] or '' } end
local t = redis.call('TIME')
local nowMs = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if st[2] and tonumber(st[3] or '0') > nowMs then
  return { 2, 'waiting', restartSafe, st[2], tostring(nowMs - (tonumber(st[3]) - tonumber(ARGV[2]))), st[4] or '' }
end
redis.call('HSET', KEYS[1], 'resumeToken', ARGV[1], 'resumeUntil', nowMs + tonumber(ARGV[2]))
return { 1, st[4] or '', st[5] or '0', restartSafe, st[7] or '' }
