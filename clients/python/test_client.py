"""The Python client against a running `toolcache serve` (TOOLCACHE_BIN).

Run by tests/e2e_serve.sh: python3 -m unittest clients/python/test_client.py
"""
import os
import re
import subprocess
import tempfile
import threading
import time
import unittest

from toolcache_client import ToolCacheClient, ToolCacheError

CONFIG = """
tools:
  get_weather: {requestType: INFORMATIONAL, ttlSeconds: 600}
  set_alarm: {requestType: COMMAND}
serve:
  maxWaitSeconds: 20
  tenants:
    alice: {token: alice-secret}
    bob: {tokenEnv: TC_TEST_BOB_TOKEN}
"""


class ServeTest(unittest.TestCase):
    def client(self, token=None, url=None, **kw):
        c = ToolCacheClient(url or self.url, token=token, **kw)
        self.addCleanup(c.close)
        return c

    @classmethod
    def setUpClass(cls):
        binary = os.environ["TOOLCACHE_BIN"]
        cls.cfg = tempfile.NamedTemporaryFile("w", suffix=".yaml", delete=False)
        cls.cfg.write(CONFIG)
        cls.cfg.close()
        env = dict(os.environ, TC_TEST_BOB_TOKEN="bob-secret")
        cls.proc = subprocess.Popen(
            [binary, "serve", "--listen", "127.0.0.1:0", "--config", cls.cfg.name,
             "--log-level", "warn"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        line = cls.proc.stdout.readline()
        m = re.search(r"listening on (http://\S+)", line)
        if not m:
            cls.proc.kill()
            raise RuntimeError("server did not start: " + line + cls.proc.stderr.read())
        cls.url = m.group(1)

    @classmethod
    def tearDownClass(cls):
        cls.proc.terminate()
        cls.proc.wait(timeout=10)
        cls.proc.stdout.close()
        cls.proc.stderr.close()
        os.unlink(cls.cfg.name)

    def test_decorated_tool_runs_once_then_hits(self):
        tc = self.client("alice-secret")
        runs = []

        @tc.cached(server="weather")
        def get_weather(city):
            runs.append(city)
            time.sleep(0.05)
            return {"city": city, "tempC": 21}

        self.assertEqual(get_weather(city="Oslo"), {"city": "Oslo", "tempC": 21})
        self.assertEqual(get_weather(city="Oslo"), {"city": "Oslo", "tempC": 21})
        self.assertEqual(runs, ["Oslo"])
        self.assertEqual(tc.lookup("weather", "get_weather", {"city": "Oslo"})["hit"], True)
        self.assertGreaterEqual(tc.stats()["calls"]["hit"], 2)

    def test_concurrent_identical_calls_run_the_tool_once(self):
        tc = self.client("alice-secret")
        runs = []
        gate = threading.Event()

        def slow():
            runs.append(1)
            gate.wait(5)
            return {"n": 1}

        results = []
        threads = [threading.Thread(target=lambda: results.append(
            tc.cached_call("weather", "get_weather", {"city": "Rome"}, slow)))
            for _ in range(4)]
        for t in threads:
            t.start()
        time.sleep(0.5)
        gate.set()
        for t in threads:
            t.join()
        self.assertEqual(results, [{"n": 1}] * 4)
        self.assertEqual(len(runs), 1)

    def test_tenants_are_isolated_and_tokens_checked(self):
        alice = self.client("alice-secret")
        bob = self.client("bob-secret")
        alice.record("weather", "get_weather", {"city": "Lima"}, {"t": "alice"}, 0.1)
        self.assertTrue(alice.lookup("weather", "get_weather", {"city": "Lima"})["hit"])
        self.assertFalse(bob.lookup("weather", "get_weather", {"city": "Lima"})["hit"])
        with self.assertRaises(ToolCacheError) as e:
            self.client("wrong").lookup("weather", "get_weather", {})
        self.assertEqual(e.exception.status, 401)
        with self.assertRaises(ToolCacheError) as e:
            self.client().lookup("weather", "get_weather", {})
        self.assertEqual(e.exception.status, 401)

    def test_writes_invalidate_and_explain_says_why(self):
        tc = self.client("bob-secret")
        tc.record("clock", "get_weather", {"city": "Kyiv"}, {"t": 1}, 0.1)
        self.assertTrue(tc.lookup("clock", "get_weather", {"city": "Kyiv"})["hit"])
        ex = tc.explain("clock", "set_alarm", {"at": "7:00"})
        self.assertFalse(ex["cacheable"])
        self.assertEqual(ex["reason"], "command")
        self.assertEqual(tc.cached_call("clock", "set_alarm", {"at": "7:00"}, lambda: "ok"), "ok")
        self.assertFalse(tc.lookup("clock", "get_weather", {"city": "Kyiv"})["hit"])

    def test_a_failing_tool_is_not_cached(self):
        tc = self.client("alice-secret")

        def boom():
            raise RuntimeError("upstream down")

        with self.assertRaises(RuntimeError):
            tc.cached_call("weather", "get_weather", {"city": "Nowhere"}, boom)
        self.assertFalse(tc.lookup("weather", "get_weather", {"city": "Nowhere"})["hit"])

    def test_bad_input_is_a_clean_error(self):
        tc = self.client("alice-secret")
        with self.assertRaises(ToolCacheError) as e:
            tc.complete("t424242", {"x": 1})
        self.assertEqual(e.exception.status, 404)
        with self.assertRaises(ToolCacheError) as e:
            tc.lookup("", "get_weather", {})
        self.assertEqual(e.exception.status, 400)

    def test_the_cache_failing_never_fails_the_call(self):
        tc = self.client(url="http://127.0.0.1:1", timeout=2)
        self.assertEqual(tc.cached_call("w", "get_weather", {}, lambda: 42), 42)


if __name__ == "__main__":
    unittest.main()
