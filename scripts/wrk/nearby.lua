-- "Cheapest near me" from points nobody sent before: every request a new point in the Perth
-- metro area (six decimals, about 0.1 m apart), so no cache can hold the answer.
-- Usage: wrk -s scripts/wrk/nearby.lua http://HOST:PORT
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

function init(args)
  math.randomseed(os.time() * 1000 + (id or 0))
end

function request()
  local lat = -32.35 + math.random() * 0.65
  local lng = 115.70 + math.random() * 0.35
  return wrk.format("GET", string.format(
    "/v1/stations?near=%.6f,%.6f&radius=10&product=1&sort=price&limit=10", lat, lng))
end
