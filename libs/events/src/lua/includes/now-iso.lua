--[[
  Current Redis server time as an ISO-8601 UTC string with milliseconds
  ("2025-01-31T12:34:56.789Z"), the format JavaScript's Date#toISOString gives.
  Redis Lua has no `os` library, so the date is computed from TIME with the
  days-to-civil algorithm (proleptic Gregorian calendar).
]]
local function now_iso()
  local t = redis.call('TIME')
  local secs = tonumber(t[1])
  local ms = math.floor(tonumber(t[2]) / 1000)
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
