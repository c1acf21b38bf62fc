-- Questions no cache has seen: `id=` with 50 station ids drawn afresh for every request (from
-- the ids file named after `--`), or, with a second argument `open`, the cheapest 20 open
-- within 10 km of a metro point at a minute of the week ahead, both drawn afresh (Perth time,
-- from the date after `--`); each with one product drawn afresh.
-- Usage: wrk -s scripts/wrk/favourites.lua http://HOST:PORT -- ids.txt
--        wrk -s scripts/wrk/favourites.lua http://HOST:PORT -- YYYY-MM-DD open
local ids = {}
local mode = "id"
local first_day

function init(args)
  mode = args[2] or "id"
  if mode == "open" then
    local y, m, d = string.match(args[1], "(%d+)-(%d+)-(%d+)")
    first_day = os.time({ year = tonumber(y), month = tonumber(m), day = tonumber(d), hour = 12 })
  else
    for line in io.lines(args[1]) do
      if #line == 64 then
        ids[#ids + 1] = line
      end
    end
  end
  math.randomseed(os.time() + (wrk.thread and 1 or 0))
end

local products = { "1", "2", "4", "5", "6", "10", "11" }

function request()
  local product = products[math.random(#products)]
  if mode == "open" then
    local day = os.date("%Y-%m-%d", first_day + 86400 * math.random(0, 6))
    local at = string.format("%sT%02d:%02d", day, math.random(0, 23), math.random(0, 59))
    -- Near a point of the metro area, as "open near me" is asked.
    local lat = -32.2 + math.random() * 0.5
    local lng = 115.7 + math.random() * 0.3
    return wrk.format("GET", string.format("/v1/stations?product=%s&near=%.4f,%.4f&radius=10&sort=price&limit=20&open=%s", product, lat, lng, at))
  end
  local picked = {}
  for i = 1, 50 do
    picked[i] = ids[math.random(#ids)]
  end
  -- Distinct ids, as the route requires: a repeat is replaced by its neighbour in the file.
  local seen, list = {}, {}
  for i, v in ipairs(picked) do
    local j = 0
    while seen[v] do
      j = j + 1
      v = ids[((math.random(#ids) + j) % #ids) + 1]
    end
    seen[v] = true
    list[i] = v
  end
  return wrk.format("GET", "/v1/stations?product=" .. product .. "&id=" .. table.concat(list, ","))
end
