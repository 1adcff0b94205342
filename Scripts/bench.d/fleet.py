#!/usr/bin/env python3
"""The `fleet` case of Scripts/bench: RUNNERS sdfetch runners with empty local caches fetch
one list (the corpus) from the loopback origin, in four ways:

  none        no remote cache: every runner asks the origin for everything
  remote      one remote cache (a WebDAV nginx started here, empty at the start); the
              runners start one after another, as the jobs of a CI fleet over a day do
  remote-all  the same remote, emptied, with every runner started at once: they miss
              together, so the origin sees more than once per URL
  tar         the fallback the remote replaces: a cache filled by an untimed run and
              archived with `tar cf`; each runner extracts it into its own folder and
              then runs (the extraction counted in its wall time)

Per way: requests the origin received, each runner's wall time and peak RSS (GNU time),
the remote's hits and uploads (--summary). Then the targets: remote hits per second of a
runner against a filled remote (>= 5,000), a cold runner against the empty remote over a
cold runner without one (<= 1.15), and a dead remote's cost (< 2 s). Python 3 stdlib only;
loopback only.
"""
import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchcommon import log  # noqa: E402


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RemoteNginx:
    """A WebDAV nginx on 127.0.0.1: the remote cache, as README's recipe sets it up."""

    def __init__(self, state):
        self.state = os.path.abspath(state)
        self.root = os.path.join(self.state, "www")
        self.port = free_port()
        os.makedirs(os.path.join(self.state, "tmp"), exist_ok=True)
        os.makedirs(self.root, exist_ok=True)
        user = "user nobody nogroup;" if os.getuid() == 0 else ""
        conf = f"""{user}
worker_processes 1;
pid {self.state}/nginx.pid;
error_log {self.state}/error.log warn;
events {{ worker_connections 4096; }}
http {{
    access_log {self.state}/access.log;
    client_body_temp_path {self.state}/tmp/body;
    proxy_temp_path {self.state}/tmp/proxy;
    fastcgi_temp_path {self.state}/tmp/fastcgi;
    uwsgi_temp_path {self.state}/tmp/uwsgi;
    scgi_temp_path {self.state}/tmp/scgi;
    keepalive_requests 100000;
    server {{
        listen 127.0.0.1:{self.port} backlog=4096;
        root {self.root};
        client_max_body_size 64m;
        dav_methods PUT;
        create_full_put_path on;
        dav_access user:rw group:rw all:r;
    }}
}}
"""
        with open(os.path.join(self.state, "nginx.conf"), "w") as f:
            f.write(conf)
        self.empty()
        subprocess.run(["nginx", "-p", self.state, "-c", self.state + "/nginx.conf", "-e", self.state + "/error.log"],
                       check=True)
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return
            except OSError:
                time.sleep(0.1)
        raise SystemExit("fleet: the remote nginx did not start; see " + self.state + "/error.log")

    @property
    def url(self):
        return "http://127.0.0.1:%d/cache" % self.port

    def empty(self):
        shutil.rmtree(os.path.join(self.root, "cache"), ignore_errors=True)
        os.makedirs(os.path.join(self.root, "cache"), exist_ok=True)
        if os.getuid() == 0:
            shutil.chown(os.path.join(self.root, "cache"), "nobody")

    def stop(self):
        try:
            with open(os.path.join(self.state, "nginx.pid")) as f:
                pid = int(f.read())
            os.kill(pid, 15)
        except (OSError, ValueError):
            pass


class Fleet:
    def __init__(self, a):
        self.a = a
        self.work = os.path.abspath(a.work)
        os.makedirs(self.work, exist_ok=True)
        names = [line.split("\t")[0] for line in open(os.path.join(a.www, a.corpus, "manifest.tsv"))
                 if not line.startswith("#") and line.strip()]
        self.urls = ["%s/%s/%s" % (a.base, a.corpus, name) for name in names]
        self.list = os.path.join(self.work, "urls.txt")
        with open(self.list, "w") as f:
            f.write("\n".join(self.urls) + "\n")

    def origin_requests(self):
        with open(self.a.access_log, "rb") as f:
            return sum(1 for _ in f)

    def command(self, tag, cache, extra, before=""):
        """GNU time around one runner: wall and peak RSS into TAG.time, the summary into TAG.json."""
        summary = os.path.join(self.work, tag + ".json")
        run = [self.a.sdfetch_bin, "--no-config", "--progress", "never", "-q", "--cache-dir", cache,
               "-j", str(self.a.j), "--summary", summary] + extra + [self.list]
        inner = " ".join(shlex_quote(x) for x in run)
        shell = (before + " && exec " + inner) if before else "exec " + inner
        return ["/usr/bin/time", "-f", "%e %M", "-o", os.path.join(self.work, tag + ".time"), "sh", "-c", shell]

    def stderr(self, command):
        """The runner's standard error (warnings, the summary line), beside its .time file."""
        return open(command[command.index("-o") + 1].replace(".time", ".err"), "w")

    def result(self, tag):
        with open(os.path.join(self.work, tag + ".time")) as f:
            wall, rss = f.read().split()[-2:]
        try:
            with open(os.path.join(self.work, tag + ".json")) as f:
                summary = json.load(f)
        except (OSError, ValueError):
            summary = {}
        return float(wall), int(rss), summary

    def way(self, name, extra, together, before=None):
        """Runs the runners (at once or one after another) and returns the way's row."""
        caches = [os.path.join(self.work, "%s-cache-%d" % (name, i)) for i in range(self.a.runners)]
        for cache in caches:
            shutil.rmtree(cache, ignore_errors=True)
        start_requests = self.origin_requests()
        commands = [self.command("%s-%d" % (name, i), caches[i], extra, before(caches[i]) if before else "")
                    for i in range(self.a.runners)]
        started = time.monotonic()
        if together:
            procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=self.stderr(c)) for c in commands]
            for p in procs:
                p.wait(timeout=self.a.timeout)
        else:
            for c in commands:
                subprocess.run(c, stdout=subprocess.DEVNULL, stderr=self.stderr(c), timeout=self.a.timeout, check=False)
        elapsed = time.monotonic() - started
        time.sleep(0.3)  # nginx writes its access log line after the response
        runs = [self.result("%s-%d" % (name, i)) for i in range(self.a.runners)]
        walls = [r[0] for r in runs]
        remote = [r[2].get("remote", {}) for r in runs]
        ok = sum(r[2].get("downloaded", 0) + r[2].get("cached", 0) + r[2].get("revalidated", 0) for r in runs)
        row = {
            "way": name, "together": together, "origin_requests": self.origin_requests() - start_requests,
            "walls": walls, "peak_rss_kb": [r[1] for r in runs], "elapsed": elapsed,
            "hits": sum(r.get("hits", 0) for r in remote), "uploads": sum(r.get("uploads", 0) for r in remote),
            "errors": sum(r.get("errors", 0) for r in remote), "succeeded": ok,
        }
        log("fleet %-10s origin %6d requests, walls %s s, peak RSS max %d MB, remote hits %d uploads %d errors %d"
            % (name, row["origin_requests"], " ".join("%.2f" % w for w in walls), max(row["peak_rss_kb"]) // 1024,
               row["hits"], row["uploads"], row["errors"]))
        return row

    def run(self):
        remote = RemoteNginx(os.path.join(self.work, "remote"))
        # In a fleet the remote is another machine; here it shares the runners' disk and two
        # cores. Its PUTs (a temporary file written, renamed) on that disk are charged to the
        # runners' walls, so the cold-run target is measured against a tmpfs remote as well.
        shm = "/dev/shm/sdfetch-fleet-%d" % os.getpid()
        remote_tmpfs = RemoteNginx(shm) if os.path.isdir("/dev/shm") else None
        try:
            rows = [self.way("none", [], together=True)]
            rows.append(self.way("remote", ["--remote-cache", remote.url], together=False))
            remote.empty()
            rows.append(self.way("remote-all", ["--remote-cache", remote.url], together=True))
            # tar: one untimed fill, archived; each runner extracts it first
            seed = os.path.join(self.work, "seed-cache")
            shutil.rmtree(seed, ignore_errors=True)
            subprocess.run([self.a.sdfetch_bin, "--no-config", "-q", "--cache-dir", seed, self.list],
                           stdout=subprocess.DEVNULL, check=False)
            archive = os.path.join(self.work, "cache.tar")
            subprocess.run(["tar", "cf", archive, "-C", seed, "."], check=True)
            rows.append(self.way("tar", [], together=True,
                                 before=lambda cache: "mkdir -p %s && tar xf %s -C %s" % (
                                     shlex_quote(cache), shlex_quote(archive), shlex_quote(cache))))
            # targets: a cold runner with and without an empty remote, interleaved; hits/s over a filled one
            cold, cold_remote, cold_tmpfs, warm = [], [], [], []
            for rep in range(self.a.runs):
                cold.append(self.single("cold-%d" % rep, []))
                remote.empty()
                cold_remote.append(self.single("cold-remote-%d" % rep, ["--remote-cache", remote.url]))
                warm.append(self.single("warm-remote-%d" % rep, ["--remote-cache", remote.url]))
                if remote_tmpfs:
                    remote_tmpfs.empty()
                    cold_tmpfs.append(self.single("cold-remote-tmpfs-%d" % rep, ["--remote-cache", remote_tmpfs.url]))
            dead_port = free_port()
            dead = self.single("dead-remote", ["--remote-cache", "http://127.0.0.1:%d/cache" % dead_port])
            targets = {
                "cold_wall_median": statistics.median(cold),
                "cold_remote_wall_median": statistics.median(cold_remote),
                "cold_ratio": statistics.median(cold_remote) / statistics.median(cold),
                "cold_tmpfs_wall_median": statistics.median(cold_tmpfs) if cold_tmpfs else None,
                "remote_hits_per_second": len(self.urls) / statistics.median(warm),
                "dead_remote_extra": dead - statistics.median(cold),
            }
        finally:
            remote.stop()
            if remote_tmpfs:
                remote_tmpfs.stop()
                shutil.rmtree(shm, ignore_errors=True)
        return rows, targets

    def single(self, tag, extra):
        cache = os.path.join(self.work, tag + "-cache")
        shutil.rmtree(cache, ignore_errors=True)
        command = self.command(tag, cache, extra)
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=self.stderr(command), timeout=self.a.timeout,
                       check=False)
        wall, _, _ = self.result(tag)
        log("fleet %-16s %.2f s" % (tag, wall))
        return wall


def shlex_quote(text):
    import shlex
    return shlex.quote(text)


def table(rows, targets, urls, runners):
    out = ["| way | runners | origin requests | per URL | wall min / median / max (s) | peak RSS max (MB) | remote hits | uploads | remote errors |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        walls = sorted(r["walls"])
        out.append("| %s | %d %s | %d | %.2f | %.2f / %.2f / %.2f | %d | %d | %d | %d |" % (
            r["way"], runners, "at once" if r["together"] else "one after another", r["origin_requests"],
            r["origin_requests"] / urls, walls[0], statistics.median(walls), walls[-1],
            max(r["peak_rss_kb"]) // 1024, r["hits"], r["uploads"], r["errors"]))
    t = targets
    out += ["",
            "- remote hits: %.0f URLs/s per runner (target >= 5,000): %s"
            % (t["remote_hits_per_second"], "met" if t["remote_hits_per_second"] >= 5000 else "NOT met"),
            "- cold run against an empty remote: %.2f s vs %.2f s without (%.2fx; target <= 1.15x): %s"
            % (t["cold_remote_wall_median"], t["cold_wall_median"], t["cold_ratio"],
               "met" if t["cold_ratio"] <= 1.15 else "NOT met"),
            "- the same against an empty remote on tmpfs: %s"
            % ("%.2f s (%.2fx): %s" % (t["cold_tmpfs_wall_median"], t["cold_tmpfs_wall_median"] / t["cold_wall_median"],
                                       "met" if t["cold_tmpfs_wall_median"] <= 1.15 * t["cold_wall_median"] else "NOT met")
               if t["cold_tmpfs_wall_median"] else "not measured (no /dev/shm)"),
            "- a dead remote (a closed port): %+.2f s over the cold run (target < 2 s): %s"
            % (t["dead_remote_extra"], "met" if t["dead_remote_extra"] < 2 else "NOT met")]
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser()
    for name in ("base", "www", "corpus", "access-log", "work", "results", "sdfetch-bin"):
        ap.add_argument("--" + name, required=True)
    ap.add_argument("--runners", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("-j", type=int, default=32)
    ap.add_argument("--timeout", type=int, default=300)
    a = ap.parse_args()
    fleet = Fleet(a)
    rows, targets = fleet.run()
    text = table(rows, targets, len(fleet.urls), a.runners)
    os.makedirs(a.results, exist_ok=True)
    with open(os.path.join(a.results, "fleet.md"), "w") as f:
        f.write(text)
    with open(os.path.join(a.results, "fleet.json"), "w") as f:
        json.dump({"rows": rows, "targets": targets}, f, indent=1)
    print(text)


if __name__ == "__main__":
    main()
