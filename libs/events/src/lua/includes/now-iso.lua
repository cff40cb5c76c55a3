--[[
  Current Redis server time as an ISO-8601 UTC string with milliseconds
  ("2025-01-31T12:34:56.789Z"), the format JavaScript's Date#toISOString gives.
  Redis Lua has no `os` library, so the date is computed from TIME with the
  days-to-civil algorithm (proleptic Gregorian calendar).

    now_iso(): the time now, read once per script call: a script runs whole before any other
      command, so the events one call appends share its instant (their ids still order them).
    now_ms(): the same instant in milliseconds since 1970 (what a stream id and a compact run's
      times hold: taken as read, not parsed back from now_iso's string).
    ms_iso(ms): a time given in milliseconds since 1970, written as now_iso() writes it.
    iso_ms(iso): milliseconds since 1970 of a time as now_iso() writes it (its inverse: the
      append path cuts the log by stream id and the transcript by `at`, and keeps them aligned).
]]
local function ms_iso(total)
  local secs = math.floor(total / 1000)
  local ms = total - secs * 1000
  local days = math.floor(secs / 86400)
  local rem = secs - days * 86400
  local z = days + 719468
  local era = math.floor(z / 146097)
  local doe = z - era * 146097
  local yoe = math.floor((doe - math.floor(doe / 1460) + math.floor(doe / 36524) - math.floor(doe / 146096)) / 365)
  local doy = doe - (365 * yoe + math.floor(yoe / 4) - math.floor(yoe / 100))
  local mp = math.floor((5 * doy + 2) / 153)
  local day = doy - math.floor((153 * mp + 2) / 5) + 1
  local month = mp < 10 and mp + 3 or mp - 9
  local year = yoe + era * 400
  if month <= 2 then year = year + 1 end
  return string.format('%04d-%02d-%02dT%02d:%02d:%02d.%03dZ', year, month, day,
    math.floor(rem / 3600), math.floor((rem % 3600) / 60), rem % 60, ms)
end

local script_ms, script_now = nil, nil

local function now_ms()
  if not script_ms then
    local t = redis.call('TIME')
    script_ms = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
  end
  return script_ms
end

local function now_iso()
  if not script_now then script_now = ms_iso(now_ms()) end
  return script_now
end

-- Milliseconds since 1970 of a time as now_iso() writes it (days-from-civil, the inverse of its algorithm).
local function iso_ms(iso)
  local y, mo, d, h, mi, s, ms = string.match(iso, '^(%d+)-(%d+)-(%d+)T(%d+):(%d+):(%d+)%.(%d+)Z$')
  y, mo = tonumber(y), tonumber(mo)
  if mo <= 2 then y = y - 1 end
  local era = math.floor(y / 400)
  local yoe = y - era * 400
  local doy = math.floor((153 * ((mo + 9) % 12) + 2) / 5) + tonumber(d) - 1
  local days = era * 146097 + yoe * 365 + math.floor(yoe / 4) - math.floor(yoe / 100) + doy - 719468
  return (((days * 24 + tonumber(h)) * 60 + tonumber(mi)) * 60 + tonumber(s)) * 1000 + tonumber(ms)
end
