-- A random window of the stored-history documents, so answers are rarely repeated:
-- /v1/stats: a random product and a range within the last 100 days (at least a week long);
-- with `wholesale` after the date, /v1/wholesale: a random product with a terminal gate price,
-- a random centre and a 365-day window ending within the last 700 days.
-- Usage: wrk -s scripts/wrk/stats.lua http://HOST:PORT -- YYYY-MM-DD (today) [wholesale]
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

local products = { 1, 2, 4, 5, 6, 10, 11 }
local wholesale_products = { 1, 2, 4 }
local centres = { "perth", "albany", "broome", "esperance", "geraldton", "port-hedland" }
local today
local wholesale = false

function init(args)
  math.randomseed(os.time() * 1000 + (id or 0))
  local y, m, d = args[1]:match("(%d+)-(%d+)-(%d+)")
  today = os.time({ year = tonumber(y), month = tonumber(m), day = tonumber(d), hour = 12 })
  wholesale = args[2] == "wholesale"
end

local function day(back)
  return os.date("!%Y-%m-%d", today - back * 86400)
end

local function pick(list)
  return list[math.random(1, #list)]
end

function request()
  if wholesale then
    local back = math.random(0, 700)
    return wrk.format("GET", string.format("/v1/wholesale?product=%d&centre=%s&from=%s&to=%s",
      pick(wholesale_products), pick(centres), day(back + 364), day(back)))
  end
  local length = 7 + math.random(0, 83)
  local back = math.random(0, 100 - length)
  return wrk.format("GET", string.format("/v1/stats?product=%d&from=%s&to=%s", pick(products), day(back + length), day(back)))
end
