--[[
  API side: gives back a reservation the owner did not take in time, so the next `wait` can try
  again. Only the holder's own token is given back; a resume the worker already began is left alone.

    Input:
      KEYS[1] run hash

      ARGV[1] token

    Output:
      {1, ''}       given back (the run is still waiting, untouched)
      {0, status}   not given back: the reservation is gone (the owner took it) or never matched

    Events:
      none
]]
--- @include "includes/run-record"

local st = run_fields(KEYS[1], { 'status', 'resumeToken' })
if st[1] == 'waiting' and st[2] == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'resumeToken', 'resumeUntil', 'resumeKey')
  return { 1, '' }
end
return { 0, st[1] or '' }
