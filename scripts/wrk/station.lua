-- One station nobody asked for before: station ids from the file named after `--`, walked
-- once each per day and expansion (each thread its own share), so every request is new;
-- a thread stops when its share is done.
-- Usage: wrk -s scripts/wrk/station.lua http://HOST:PORT -- ids.txt
local threads = 0
function setup(thread)
  threads = threads + 1
  thread:set("id", threads)
  thread:set("of", 0)
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
end

function request()
  local path = paths[next_index] or paths[1]
  next_index = next_index + 4
  return wrk.format("GET", path)
end

function response()
  if next_index > #paths then
    wrk.thread:stop()
  end
end
