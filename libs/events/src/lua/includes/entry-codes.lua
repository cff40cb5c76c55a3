--[[
  What a stream entry kept compact (COMPACT_RUNS) holds in place of two of its values
  (entry-codes.ts, whose table this mirrors; entry-codes.spec.ts pins the two): its type as one
  character, and a `run.started`'s data `{"workerId":<JSON string>,"epoch":<the entry's epoch>}`
  as `~w<JSON string>`. Codes are kept as long as retention keeps an entry: never changed or
  reused.

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

local function entry_values(ev, data)
  if COMPACT_RUNS ~= 1 then return ev.type, data end
  if ev.type == 'run.started' then
    -- Only the exact text the claim writes: anything else (a recovery's data) is kept as it is.
    local worker = string.match(data, '^{"workerId":(".*"),"epoch":' .. ev.epoch .. '}$')
    if worker then return TYPE_CODES['run.started'], '~w' .. worker end
  end
  return TYPE_CODES[ev.type] or ev.type, data
end
