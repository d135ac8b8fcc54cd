import { createHash } from 'node:crypto';

/**
 * The reservation, run atomically by Redis (see send-pacer.ts for the contract and the bound it keeps).
 *
 * Each limit owns two keys: its TAT ("theoretical arrival time": the virtual slot of its latest frontier
 * reservation plus one interval) and a sorted set of *holes*, stretches of time before the TAT where a
 * reservation still fits at least one interval from its neighbours. Holes appear when several limits are
 * reserved together: a Telegram send for a chat that may not send for another 800 ms lands 800 ms ahead
 * on the bot's overall limit, and plain GCRA, which knows only its TAT, would leave those 800 ms of the
 * bot's capacity unused by every other chat. A hole is stored as score = its first allowed instant and
 * member = its last allowed instant; holes never overlap, so both ends sort the same way.
 *
 * Times are whole microseconds (exact in Lua's doubles until the year 2255), formatted with %d because
 * Lua 5.1's tostring keeps only 14 digits.
 *
 * KEYS: per limit, its TAT key then its holes key.
 * ARGV: now in µs ('' = the server's TIME), max wait in µs (-1 = none), grace in ms before idle keys
 * expire, then per limit its interval and its burst tolerance (burst × interval) in µs, and 1 if it
 * packs (the fastest limit of the reservation: the shared one whose capacity counts) or 0.
 * Returns { 1 when reserved or 0 when refused, µs from now to the (earliest) slot, now in µs }.
 */
export const RESERVE_SCRIPT = `
local function fmt(us) return string.format('%d', us) end

local now
if ARGV[1] == '' then
  local time = redis.call('TIME')
  now = tonumber(time[1]) * 1000000 + tonumber(time[2])
else
  now = tonumber(ARGV[1])
end
local max_wait = tonumber(ARGV[2])
local grace_ms = tonumber(ARGV[3])
local n = #KEYS / 2
local tat, interval, tolerance, pack, has_holes = {}, {}, {}, {}, {}

-- The hole of limit i that contains instant c, as its first and last allowed instants, or nil.
local function hole_at(i, c)
  if not has_holes[i] then return nil end
  local found = redis.call('ZREVRANGEBYSCORE', KEYS[2 * i], fmt(c), '-inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #found > 0 and tonumber(found[1]) >= c then return tonumber(found[2]), tonumber(found[1]) end
  return nil
end

-- A limit that packs keeps its reservations on a grid of whole intervals from the start of the hole
-- or stretch they open, so the gaps they leave hold whole slots rather than slivers nobody can use.
local function snap(i, origin, c)
  if pack[i] == 0 or c <= origin then return c end
  return origin + math.ceil((c - origin) / interval[i]) * interval[i]
end

-- The earliest instant at or after c that limit i allows: in the hole around c, in the next hole, or
-- on the frontier, whichever comes first.
local function earliest(i, c)
  local first, last = hole_at(i, c)
  if first and snap(i, first, c) <= last then return snap(i, first, c) end
  local frontier = snap(i, math.max(tat[i], now), math.max(c, tat[i] - tolerance[i]))
  if not has_holes[i] then return frontier end
  local next_hole = redis.call('ZRANGEBYSCORE', KEYS[2 * i], '(' .. fmt(c), '+inf', 'WITHSCORES', 'LIMIT', 0, 1)
  if #next_hole > 0 then return math.min(frontier, tonumber(next_hole[2])) end
  return frontier
end

for i = 1, n do
  tat[i] = tonumber(redis.call('GET', KEYS[2 * i - 1]) or '0')
  interval[i] = tonumber(ARGV[1 + 3 * i])
  tolerance[i] = tonumber(ARGV[2 + 3 * i])
  pack[i] = tonumber(ARGV[3 + 3 * i])
  -- Holes wholly in the past can never be used: drop them, oldest first. Most limits never have any,
  -- and then this one call is all their holes cost.
  local oldest = redis.call('ZRANGE', KEYS[2 * i], 0, 0)
  while #oldest > 0 and tonumber(oldest[1]) < now do
    redis.call('ZREM', KEYS[2 * i], oldest[1])
    oldest = redis.call('ZRANGE', KEYS[2 * i], 0, 0)
  end
  has_holes[i] = #oldest > 0
end

-- Move c forward until one full pass finds every limit allowing it. Each move skips at least one hole
-- or reaches a frontier, so this ends.
local c = now
repeat
  local moved = false
  for i = 1, n do
    local e = earliest(i, c)
    if e > c then c = e; moved = true end
  end
until not moved

-- Refused: nothing is written, so a caller that will not wait takes no capacity from those that do.
if max_wait >= 0 and c - now > max_wait then return { 0, c - now, now } end

for i = 1, n do
  local tat_key, holes = KEYS[2 * i - 1], KEYS[2 * i]
  local first, last = hole_at(i, c)
  local function add_hole(from, to)
    if to >= from then
      redis.call('ZADD', holes, fmt(from), fmt(to))
      has_holes[i] = true
    end
  end
  if first then
    redis.call('ZREM', holes, fmt(last))
    add_hole(first, c - interval[i])
    add_hole(c + interval[i], last)
  else
    add_hole(math.max(tat[i], now), c - interval[i])
    tat[i] = math.max(tat[i], c) + interval[i]
  end
  -- Once the TAT has passed, a key says nothing a missing key would not: let it go shortly after.
  local ttl = math.ceil((tat[i] - now) / 1000) + grace_ms
  redis.call('SET', tat_key, fmt(tat[i]), 'PX', ttl)
  if has_holes[i] then redis.call('PEXPIRE', holes, ttl) end
end
return { 1, c - now, now }
`;

export const RESERVE_SCRIPT_SHA = createHash('sha1').update(RESERVE_SCRIPT).digest('hex');
