-- One station nobody asked for before: station ids from the file named after `--`, walked
-- once each per day and expansion (thread i of n takes every n-th, from the i-th), so every
-- request is new; a thread stops when its share is done.
-- Usage: wrk -t N -s scripts/wrk/station.lua http://HOST:PORT -- ids.txt N
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
end

local variants = { "", "?expand=brand", "?expand=all", "?day=yesterday", "?day=yesterday&expand=all" }
local paths = {}
local next_index

function init(args)
  local n = 0
  for line in io.lines(args[1]) do
    if #line == 64 then
      for _, v in ipairs(variants) do
        n = n + 1
        paths[n] = "/v1/stations/" .. line .. v
      end
    end
  end
  next_index = id
  stride = tonumber(args[2]) or 1
end

function request()
  local path = paths[next_index] or paths[1]
  next_index = next_index + stride
  return wrk.format("GET", path)
end

function response()
  if next_index > #paths then
    wrk.thread:stop()
  end
end
