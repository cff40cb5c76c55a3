--[[
  Store or remove one of the tenant's tools (`PUT`/`DELETE /v1/tools/{name}`, SPEC §18). A new
  name is refused once the tenant has MAX tools: the count is checked and the tool written in one
  step, so two concurrent PUTs of new names can never take the tenant past it. Every change bumps
  the version every session's catalog is cached under, and keeps the bytes the tools hold (what
  they count in the tenant's stored bytes). The tool's JSON is stored verbatim (never decoded here).

    Input:
      KEYS[1] the tenant's tools  <p>:tenant-tools:{t}       (hash name → tool JSON)
      KEYS[2] their meta          <p>:tenant-tools-meta:{t}  (hash version, bytes)

      ARGV[1] 'put' | 'delete' | 'replace' (secrets:rotate: only over the JSON it read)
      ARGV[2] tool name (checked by the caller)
      ARGV[3] put, replace: the tool's JSON
      ARGV[4] put: MAX, most tools of a tenant; replace: the JSON the caller read

    Output:
      {1, count}  stored (put, replace) or removed (delete); count = the tenant's tools now
      {0, count}  put: refused, a new name and the tenant has MAX already; delete: no such tool;
                  replace: the tool changed since it was read (or is gone)

    Events:
      none (a tenant's tools are not session events)
]]
local count = redis.call('HLEN', KEYS[1])
local held = redis.call('HSTRLEN', KEYS[1], ARGV[2])
local exists = redis.call('HEXISTS', KEYS[1], ARGV[2]) == 1
local bytes
if ARGV[1] == 'replace' then
  if redis.call('HGET', KEYS[1], ARGV[2]) ~= ARGV[4] then return { 0, count } end
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
  bytes = string.len(ARGV[3]) - held
elseif ARGV[1] == 'put' then
  if not exists then
    if count >= tonumber(ARGV[4]) then return { 0, count } end
    count = count + 1
  end
  redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
  bytes = string.len(ARGV[2]) + string.len(ARGV[3]) - (exists and (string.len(ARGV[2]) + held) or 0)
else
  if not exists then return { 0, count } end
  redis.call('HDEL', KEYS[1], ARGV[2])
  count = count - 1
  bytes = -(string.len(ARGV[2]) + held)
end
redis.call('HINCRBY', KEYS[2], 'version', 1)
redis.call('HINCRBY', KEYS[2], 'bytes', bytes)
return { 1, count }
