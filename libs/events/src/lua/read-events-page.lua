--[[
  Reads one page of a session's events after a cursor, bounded by count and by bytes
  (EventLog.page): a reader holds at most one page of a log however large its events are
  (SPEC §10 "Event streams"). Entries are taken one XRANGE at a time, so the script never holds
  more than the page plus the one entry that would overflow it.

    Input:
      KEYS[1] the session's event stream (KeySpace.events)

      ARGV[1] cursor: events after this stream id (exclusive)
      ARGV[2] at most this many entries
      ARGV[3] at most this many bytes of field values; the first entry is taken whatever its size

    Output:
      {more, entries}: more is 1 when the log holds entries after the page, else 0; entries as
      XRANGE returns them, oldest first

    Events:
      none
]]
local maxCount, maxBytes = tonumber(ARGV[2]), tonumber(ARGV[3])
local entries, bytes, cursor = {}, 0, ARGV[1]
while true do
  local entry = redis.call('XRANGE', KEYS[1], '(' .. cursor, '+', 'COUNT', 1)[1]
  if entry == nil then return {0, entries} end
  if #entries == maxCount then return {1, entries} end
  local size = 0
  for _, value in ipairs(entry[2]) do size = size + #value end
  if #entries > 0 and bytes + size > maxBytes then return {1, entries} end
  entries[#entries + 1] = entry
  bytes = bytes + size
  cursor = entry[1]
end
