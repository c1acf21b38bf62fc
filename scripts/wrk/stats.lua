-- A random /v1/stats window: a random product, and a random range within the last 100 days
-- (at least a week long), so answers are rarely repeated.
-- Usage: wrk -s scripts/wrk/stats.lua http://HOST:PORT -- YYYY-MM-DD (today)
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

local products = { 1, 2, 4, 5, 6, 10, 11 }
local today

function init(args)
  math.randomseed(os.time() * 1000 + (id or 0))
  local y, m, d = args[1]:match("(%d+)-(%d+)-(%d+)")
  today = os.time({ year = tonumber(y), month = tonumber(m), day = tonumber(d), hour = 12 })
end

local function day(back)
  return os.date("!%Y-%m-%d", today - back * 86400)
end

function request()
  local length = 7 + math.random(0, 83)
  local back = math.random(0, 100 - length)
  local p = products[math.random(1, #products)]
  return wrk.format("GET", string.format("/v1/stats?product=%d&from=%s&to=%s", p, day(back + length), day(back)))
end
