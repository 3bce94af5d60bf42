"""Example: a function tool cached by `toolcache serve`.

    toolcache serve --config clients/serve.example.yaml &
    TOOLCACHE_URL=http://127.0.0.1:8090 TOOLCACHE_TOKEN=alice-secret \
        python3 clients/python/examples/weather.py
"""
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from toolcache_client import ToolCacheClient  # noqa: E402

tc = ToolCacheClient(os.environ.get("TOOLCACHE_URL", "http://127.0.0.1:8090"),
                     token=os.environ.get("TOOLCACHE_TOKEN"))


@tc.cached(server="weather", cost=0.002)
def get_weather(city: str) -> dict:
    time.sleep(0.2)  # the slow upstream API
    return {"city": city, "tempC": 21}


for _ in range(3):
    t0 = time.monotonic()
    print(get_weather(city="Paris"), f"{(time.monotonic() - t0) * 1000:.1f} ms")
print(tc.explain("weather", "get_weather", {"city": "Paris"}))
