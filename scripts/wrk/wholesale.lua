-- A random /v1/wholesale year: a random product with a terminal gate price, a random centre,
-- and a random 365-day window ending within the last 700 days, so answers are rarely repeated.
-- Usage: wrk -s scripts/wrk/wholesale.lua http://HOST:PORT -- YYYY-MM-DD (today)
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

local products = { 1, 2, 4 }
local centres = { "perth", "albany", "broome", "esperance", "geraldton", "port-hedland" }
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
  local back = math.random(0, 700)
  local p = products[math.random(1, #products)]
  local c = centres[math.random(1, #centres)]
  return wrk.format("GET", string.format("/v1/wholesale?product=%d&centre=%s&from=%s&to=%s", p, c, day(back + 364), day(back)))
end
