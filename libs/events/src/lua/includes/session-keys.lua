--[[
  What every part of the append path shares about a session's keys and a run's end.

    session_base(K): `<p>:{t:sid}` from the session hash's name (K[2]); every key of the session
      starts with it and lives in its hash-tag slot.
    int(n): an integer as a Redis argument (a Lua number may otherwise be sent in exponent form).
    TERMINAL: the events that end a run, each with the status it leaves; ENDED: those statuses.
]]

local TERMINAL = {
  ['run.completed'] = 'completed', ['run.failed'] = 'failed',
  ['run.expired'] = 'expired', ['run.lost'] = 'lost'
}
local ENDED = { completed = true, failed = true, expired = true, lost = true }

-- Integers as Redis arguments (a Lua number may otherwise be sent in exponent form).
local function int(n) return string.format('%d', n) end

-- `<p>:{t:sid}` from the session hash's name: every key of the session starts with it.
local function session_base(K)
  return string.sub(K[2], 1, -#':session' - 1)
end
