--[[
  Pairs a node with its tenant, or re-establishes a paired one, and marks it connected (SPEC §15).
  A node that presents its id and secret takes its record back, even from a connection that is
  still marked live (the node reconnected before its old connection was noticed gone). Otherwise
  the name decides: a record of that name whose connection is live refuses the pairing (nobody
  takes over a connected node without its secret); one that is not connected is reused, so a
  restarted node keeps its id; a new name is a new node, within the tenant's count. A node that
  presents its id and secret under the name of another, disconnected record renames itself onto
  it, and that record goes. A record an operator key paired is never taken, nor renamed onto (so
  removed), by an agent key without its secret (SPEC §11, §15: a node's name belongs to the key
  role that paired it; agent keys do not get around what operators set up).

  The connection keys are built from KEYS[1] (`<KEYS[1]>:<id>:conn`): they share its hash tag.

    Input:
      KEYS[1] the tenant's nodes (hash: nodeId → record JSON)

      ARGV[1] a fresh node id (used for a new node)
      ARGV[2] name
      ARGV[3] platform
      ARGV[4] commands (JSON array)
      ARGV[5] the id the node presents, or ''
      ARGV[6] sha256 of the secret the node presents, or ''
      ARGV[7] sha256 of a fresh secret (given to a node that did not present its own)
      ARGV[8] the connection's token
      ARGV[9] now (ISO 8601)
      ARGV[10] connection lease (ms)
      ARGV[11] most nodes per tenant
      ARGV[12] the role of the pairing key (operator or agent)

    Output:
      {1, id, 'kept'}   connected with the secret it presented
      {1, id, 'new'}    connected; the fresh secret is now the node's
      {0, 'held'}       refused: a connected node has that name
      {0, 'operator'}   refused: an agent key asked for the name of a node an operator paired
                        (to pair it anew, or to rename its own node onto it)
      {-1, count}       refused: the tenant has the most nodes it may have

    Events:
      none
]]
local base, freshId, name, platform = KEYS[1], ARGV[1], ARGV[2], ARGV[3]
local presentedId, presentedSecret, freshSecret = ARGV[5], ARGV[6], ARGV[7]
local token, now, leaseMs, maxNodes, role = ARGV[8], ARGV[9], tonumber(ARGV[10]), tonumber(ARGV[11]), ARGV[12]

local function connKey(id) return base .. ':' .. id .. ':conn' end

local id, secret, kept, since, pairedBy = nil, freshSecret, 'new', now, role
if presentedId ~= '' and presentedSecret ~= '' then
  local raw = redis.call('HGET', base, presentedId)
  if raw then
    local record = cjson.decode(raw)
    if record.secretHash == presentedSecret then
      id, secret, kept, pairedBy = presentedId, presentedSecret, 'kept', record.pairedBy or role
    end
  end
end

local all = redis.call('HGETALL', base)
for i = 1, #all, 2 do
  local record = cjson.decode(all[i + 1])
  if record.name == name and all[i] ~= id then
    if redis.call('EXISTS', connKey(all[i])) == 1 then return { 0, 'held' } end
    if record.pairedBy == 'operator' and role ~= 'operator' then return { 0, 'operator' } end
    if id == nil then
      id = all[i]
    else
      -- The node renamed itself to the name of a disconnected one: that record goes.
      redis.call('HDEL', base, all[i])
    end
  end
end

if id == nil then
  if #all / 2 >= maxNodes then return { -1, #all / 2 } end
  id = freshId
end

redis.call('HSET', base, id, cjson.encode({
  id = id, name = name, platform = platform, commands = cjson.decode(ARGV[4]),
  secretHash = secret, pairedBy = pairedBy, connectedAt = since, lastSeenAt = now,
}))
redis.call('SET', connKey(id), token, 'PX', leaseMs)
return { 1, id, kept }
