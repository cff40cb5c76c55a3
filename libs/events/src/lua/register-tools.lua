--[[
  Replace the session's client tools (creating the session if missing) and append
  `tools.registered` in the same step. The event carries names and count only: endpoints and
  schemas live in the projection key, never in the log.

    Input:
      KEYS[1] stream, KEYS[2] session hash, KEYS[3] run hash (unused: run ''), KEYS[4] transcript,
      KEYS[5] runs index, KEYS[6] client tools key

      ARGV[1] event data: JSON object text {tools: [names], count} (verbatim)
      ARGV[2] the full client tool list: JSON array text (verbatim)

    Output:
      {1, eventId}

    Events:
      tools.registered
]]
--- @include "includes/append"

local id = append_event(KEYS, { type = 'tools.registered', runId = '', epoch = 0, head = ARGV[1], raws = {},
  facts = {}, tools = ARGV[2] })
return { 1, id }
