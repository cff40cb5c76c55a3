--[[
  What a stream entry kept compact (COMPACT_RUNS) holds in place of two of its values
  (entry-codes.ts, whose table this mirrors and which reads them back; entry-codes.spec.ts pins
  the two): its type as one character, and the data of the shapes every run repeats as their
  variable parts only, each exactly as the data text had it:
    run.started   {"workerId":W,"epoch":<the entry's epoch>}                  ~wW
    tool.called   {"callId":"bridge:M:N","tool":T,"source":"S","inputBytes":B,"callKey":"<the entry's runId>:K"}
                                                                              ~tM:N|S|B|K|T
    tool.settled  {"callId":"bridge:M:N","tool":T,"ok":true,"durationMs":D,"resultBytes":R}
                                                                              ~sM:N|D|R|T
  (W and T JSON strings, the rest letters or digits). Data of any other shape is kept as it is.
  Codes are kept as long as retention keeps an entry: never changed or reused.

    entry_values(ev, data): the type and data values the entry of `ev` keeps, `data` being what it
      would keep in full (spliced, or packed by the writer).
]]
--- @include "settings"

local TYPE_CODES = {
  ['session.configured'] = 'a', ['exec.rejected'] = 'b', ['run.requested'] = 'q', ['run.started'] = 's',
  ['run.output'] = 'o', ['run.parked'] = 'p', ['run.resumed'] = 'r', ['run.waited'] = 'w',
  ['run.completed'] = 'c', ['run.failed'] = 'f', ['run.expired'] = 'e', ['run.lost'] = 'l',
  ['run.recovered'] = 'v', ['run.released'] = 'x', ['tool.called'] = 'T', ['tool.settled'] = 'S',
  ['tool.blocked'] = 'B', ['approval.requested'] = 'A', ['approval.decided'] = 'D', ['store.committed'] = 'C',
  ['tools.registered'] = 'R', ['skills.registered'] = 'K', ['shell.started'] = 'h', ['shell.output'] = 'u',
  ['shell.exited'] = 'y', ['shell.removed'] = 'z', ['shell.notified'] = 'n'
}

-- A JSON string is matched as (".-"): inside one every quote is escaped, so the first quote
-- followed by the shape's next field name is its end.
local function compact_data(ev, data)
  if ev.type == 'tool.called' then
    local method, n, tool, source, bytes, run, key = string.match(data,
      '^{"callId":"bridge:(%a+):(%d+)","tool":(".-"),"source":"(%a+)","inputBytes":(%d+),"callKey":"(.-):(%d+)"}$')
    if key and run == ev.runId then return '~t' .. method .. ':' .. n .. '|' .. source .. '|' .. bytes .. '|' .. key .. '|' .. tool end
  elseif ev.type == 'tool.settled' then
    local method, n, tool, ms, bytes = string.match(data,
      '^{"callId":"bridge:(%a+):(%d+)","tool":(".-"),"ok":true,"durationMs":(%d+),"resultBytes":(%d+)}$')
    if bytes then return '~s' .. method .. ':' .. n .. '|' .. ms .. '|' .. bytes .. '|' .. tool end
  elseif ev.type == 'run.started' then
    -- Only the exact text the claim writes: anything else (a recovery's data) is kept as it is.
    local worker = string.match(data, '^{"workerId":(".*"),"epoch":' .. ev.epoch .. '}$')
    if worker then return '~w' .. worker end
  end
  return data
end

local function entry_values(ev, data)
  if COMPACT_RUNS ~= 1 then return ev.type, data end
  return TYPE_CODES[ev.type] or ev.type, compact_data(ev, data)
end
