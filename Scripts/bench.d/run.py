#!/usr/bin/env python3
"""Measurement driver for Scripts/bench (python3 stdlib only).

Scripts/bench prepares the corpora and the private nginx, then runs this with
every setting on the command line.  This file writes the URL lists, runs the
cases, and prints the table.  See `Scripts/bench --help` for what each case
measures.

Every measured command runs as
    /usr/bin/time -f ... bash -c COMMAND
in its own process group, with stdin from /dev/null, after `sync`; wall time
is the monotonic clock around it, peak RSS is GNU time's maximum resident set
(largest single process of the tree), and "requests received" is the number of
lines nginx appended to its access log during the run.  A run that passes its
time limit gets SIGINT (GNU time ignores it and still reports), then SIGKILL
five seconds later.
"""
import argparse
import json
import os
import random
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

from benchcommon import CURRENT, LOGFILE, fill, log, on_signal


# ---------------------------------------------------------------- peers
# name -> template.  {list} {j} {out} {cache} are filled per run.
PEERS = {
    'curl': "sed 's/.*/url = \"&\"/' {list} | curl -sS --fail --parallel --parallel-max {j} "
            "--remote-name-all --output-dir {out} -K -",
    'aria2c': "aria2c -q -i {list} -j {j} -d {out} --auto-file-renaming=false --allow-overwrite=true "
              "--console-log-level=error --summary-interval=0 --download-result=hide "
              "--file-allocation=none",
    'wget2': "wget2 -q --no-config -i {list} --max-threads {j} -P {out}",
}
# the floor tools' names (built in main(): the least work a case asks of any tool)
FLOOR = 'floor: curl, cp, check'
FULL_FLOOR = 'floor: curl, cp, hash, decode'

# warm-mode commands of peers (run on the output dir one cold run filled)
WARM_PEERS = {
    'wget2': ('wget2 -N', "wget2 -q --no-config -N -i {list} --max-threads {j} -P {out}"),
    'curl': ('curl re-run', PEERS['curl']),
    'aria2c': ('aria2c cond-get', PEERS['aria2c'] + ' --conditional-get=true'),
}


# ---------------------------------------------------------------- lists

def corpus_urls(base, prefix, corpus_dir):
    urls = []
    with open(os.path.join(corpus_dir, 'manifest.tsv')) as f:
        for line in f:
            if not line.startswith('#') and line.strip():
                urls.append('%s/%s/%s' % (base, prefix, line.split('\t', 1)[0]))
    return urls


def write_list(path, lines):
    with open(path, 'w') as f:
        for chunk in range(0, len(lines), 100000):
            f.write('\n'.join(lines[chunk:chunk + 100000]) + '\n')
    return path


def write_variants(path, urls, count, param):
    """`count` distinct URLs: urls, then urls?PARAM=1, urls?PARAM=2, ... (streamed)."""
    with open(path, 'w') as f:
        n = len(urls)
        for i in range(count):
            v, u = divmod(i, n)
            f.write(urls[u] + ('?%s=%d\n' % (param, v) if v else '\n'))
    return path


def write_cycle(path, urls, count):
    with open(path, 'w') as f:
        n = len(urls)
        for i in range(count):
            f.write(urls[i % n] + '\n')
    return path


# ---------------------------------------------------------------- runner

class Runner:
    def __init__(self, a):
        self.a = a
        self.work = a.work
        self.home = os.path.join(self.work, 'home')
        os.makedirs(self.home, exist_ok=True)
        self.time_bin = a.time_bin
        self.rows = []
        self.jsonl = open(os.path.join(a.results, 'runs.jsonl'), 'a')

    # -- one measured command
    def execute(self, cmd, tag, stdout_path=None, timeout=None, settle=0.3):
        timeout = timeout or self.a.timeout
        s0 = time.monotonic()
        os.sync()
        sync_s = time.monotonic() - s0
        if sync_s > 2:
            log('  (sync took %.1fs)' % sync_s)
        time.sleep(settle)
        logpos = os.path.getsize(self.a.access_log)
        nginx0 = self.nginx_cpu()
        tfile = os.path.join(self.work, 'time.out')
        efile = os.path.join(self.work, 'stderr-%s.txt' % tag)
        if os.path.exists(tfile):
            os.unlink(tfile)
        argv = [self.time_bin, '-f', 'RESULT %e %M %U %S %x', '-o', tfile, 'bash', '-c', cmd]
        env = dict(os.environ, HOME=self.home)
        out = open(stdout_path, 'wb') if stdout_path else subprocess.DEVNULL
        with open(efile, 'wb') as err:
            t0 = time.monotonic()
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err,
                                 env=env, cwd=self.work, start_new_session=True)
            CURRENT[0] = p
            capped = threading.Event()

            def stop():
                capped.set()
                for sig, pause in ((signal.SIGINT, 5.0), (signal.SIGKILL, 0)):
                    if p.poll() is not None:
                        return
                    try:
                        os.killpg(p.pid, sig)
                    except ProcessLookupError:
                        return
                    deadline = time.monotonic() + pause
                    while pause and p.poll() is None and time.monotonic() < deadline:
                        time.sleep(0.1)
            timer = threading.Timer(timeout, stop)
            timer.start()
            # Blocks in wait4: no polling quantum on short runs, and the CPU of GNU time's
            # command (bash and what it ran, waited for) to the microsecond, where GNU time
            # prints hundredths: a 0.2 s run's CPU moved by 5 % a digit.
            usage = None
            try:
                _, status, usage = os.wait4(p.pid, 0)
                p.returncode = os.waitstatus_to_exitcode(status)
            except ChildProcessError:  # reaped by the timeout's poll
                p.wait()
            wall = time.monotonic() - t0
            timer.cancel()
            CURRENT[0] = None
        if stdout_path:
            out.close()
        rc, rss, cpu, signalled = p.returncode, None, None, None
        if os.path.exists(tfile):
            for line in open(tfile, errors='replace'):
                m = re.match(r'^RESULT ([\d.]+) (\d+) ([\d.]+) ([\d.]+) (-?\d+)$', line.strip())
                if m:
                    rss = int(m.group(2)) / 1024.0
                    cpu = float(m.group(3)) + float(m.group(4))
                    rc = int(m.group(5))
                elif 'terminated by signal' in line:
                    signalled = 128 + int(line.split()[-1])
        if signalled is not None:  # GNU time's %x is 0 for a command killed by a signal
            rc = signalled
        if usage is not None and cpu is not None:
            cpu = usage.ru_utime + usage.ru_stime
        reqs = self.requests_since(logpos)
        nginx1 = self.nginx_cpu()
        nginx_cpu = nginx1 - nginx0 if nginx0 is not None and nginx1 is not None else None
        tail = open(efile, 'rb').read()[-600:].decode('utf-8', 'replace').strip().splitlines()[-3:]
        return {'cmd': cmd, 'wall': wall, 'sync_s': sync_s, 'rc': rc, 'rss_mib': rss, 'cpu_s': cpu,
                'capped': capped.is_set(), 'stderr_tail': tail, 'nginx_cpu_s': nginx_cpu, **reqs}

    def nginx_cpu(self):
        """User + system seconds the server's workers have used so far; None when unknown.

        On two cores nginx shares the machine with the client: what it spends bounds what
        any client can reach, so every row shows it beside the client's own CPU."""
        try:
            master = open(self.a.nginx_pid_file).read().strip()
            workers = open('/proc/%s/task/%s/children' % (master, master)).read().split()
            ticks = 0
            for w in workers:
                fields = open('/proc/%s/stat' % w).read().rsplit(')', 1)[1].split()
                ticks += int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15)
            return ticks / os.sysconf('SC_CLK_TCK')
        except (OSError, ValueError, IndexError, TypeError):
            return None

    def requests_since(self, pos):
        """Wait for the access log to stop growing, then count what was added."""
        path = self.a.access_log
        last, stable = -1, 0
        for _ in range(40):
            size = os.path.getsize(path)
            stable = stable + 1 if size == last else 0
            if stable >= 2:
                break
            last = size
            time.sleep(0.1)
        status, uris, conns, n, cond = {}, {}, set(), 0, 0
        with open(path, 'rb') as f:
            f.seek(pos)
            for raw in f:
                p = raw.decode('utf-8', 'replace').rstrip('\n').split('\t')
                if len(p) < 9:
                    continue
                n += 1
                status[p[1]] = status.get(p[1], 0) + 1
                uris[p[4]] = uris.get(p[4], 0) + 1
                conns.add(p[5])
                if p[7] != '-' or p[8] != '-':
                    cond += 1
        return {'requests': n, 'status': status, 'distinct_uris': len(uris),
                'max_per_uri': max(uris.values()) if uris else 0, 'conns': len(conns),
                'conditional': cond}

    # -- helpers
    def dirs(self, case, tool, j):
        key = re.sub(r'[^A-Za-z0-9_.-]', '_', '%s-%s-j%d' % (case, tool, j))
        # The -tmpfs cases put outputs and caches on tmpfs: the file system's cost out.
        root = self.a.tmpfs_work if case.endswith('-tmpfs') else self.work
        return os.path.join(root, 'out', key), os.path.join(root, 'cache', key)

    @staticmethod
    def fresh(*paths):
        for d in paths:
            shutil.rmtree(d, ignore_errors=True)
            os.makedirs(d)

    @staticmethod
    def count_files(path):
        n = 0
        for _, _, files in os.walk(path):
            n += len(files)
        return n

    def record(self, case, j, tool, lines, run, rep, **extra):
        run.update({'case': case, 'j': j, 'tool': tool, 'lines': lines, 'rep': rep, 'ts': time.time(), **extra})
        self.jsonl.write(json.dumps(run) + '\n')
        self.jsonl.flush()
        log('  %-10s j=%-3d %-16s run %-2s %8.3fs rc=%-3s req=%-7d rss=%s MiB%s%s' % (
            case, j, tool, rep, run['wall'], run['rc'], run['requests'],
            '-' if run['rss_mib'] is None else '%.1f' % run['rss_mib'],
            ' CAPPED' if run['capped'] else '', (' ' + extra['note']) if extra.get('note') else ''))

    def add_row(self, case, j, tool, lines, runs, note='', target=None, done=None):
        """done: result lines actually produced, when a capped run stopped early."""
        walls = [r['wall'] for r in runs]
        reqs = [r['requests'] for r in runs]
        rsss = [r['rss_mib'] for r in runs if r['rss_mib'] is not None]
        cpus = [r['cpu_s'] for r in runs if r.get('cpu_s') is not None]
        servers = [r['nginx_cpu_s'] for r in runs if r.get('nginx_cpu_s') is not None]
        med = statistics.median(walls)
        self.rows.append({
            'case': case, 'j': j, 'tool': tool, 'lines': lines, 'runs': len(runs),
            'median': med, 'min': min(walls), 'max': max(walls),
            'urls_per_s': (lines if done is None else done) / med if med > 0 else None,
            'req_min': min(reqs), 'req_max': max(reqs),
            'rss_mib': max(rsss) if rsss else None,
            'cpu': statistics.median(cpus) if cpus else None,
            # in run order: cells whose runs were interleaved compare run by run
            'cpus': [r.get('cpu_s') for r in runs],
            'nginx_cpu': statistics.median(servers) if servers else None,
            'rc': sorted(set(r['rc'] for r in runs)),
            'capped': any(r['capped'] for r in runs), 'note': note, 'target': target})

    def sdfetch_statuses(self, stdout_path):
        counts = {}
        try:
            with open(stdout_path, 'rb') as f:
                for line in f:
                    k = line.split(b'\t', 1)[0].decode('ascii', 'replace')
                    counts[k] = counts.get(k, 0) + 1
        except OSError:
            pass
        return counts

    @staticmethod
    def fmt_counts(counts):
        return ' '.join('%s=%d' % kv for kv in sorted(counts.items(), key=lambda kv: -kv[1])) or 'no result lines'

    # -- the fetch cases: cold / dup5 / warm
    def fetch_case(self, case, listfile, j, tools, warm=False):
        """tools: list of (display name, template, is_sdfetch).  Cold: fresh
        dirs each run; warm: dirs filled by one untimed cold run, then kept."""
        lines = sum(1 for _ in open(listfile))
        samples = {name: [] for name, _, _ in tools}
        notes = {name: '' for name, _, _ in tools}
        # untimed warm-up (cold) / preparation (warm)
        if warm or self.a.warmup:
            for name, tpl, is_sd in tools:
                out, cache = self.dirs(case, name, j)
                self.fresh(out, cache)
                cold_tpl = tpl[1] if isinstance(tpl, tuple) else tpl
                r = self.execute(fill(cold_tpl, list=listfile, j=j, out=out, cache=cache), 'prep',
                                 stdout_path=os.path.join(self.work, 'prep.stdout'))
                log('  %-10s j=%-3d %-16s %s %.3fs rc=%s req=%d' % (
                    case, j, name, 'prep (untimed cold run)' if warm else 'warm-up (untimed)',
                    r['wall'], r['rc'], r['requests']))
        for rep in range(1, self.a.runs + 1):
            for name, tpl, is_sd in tools:
                out, cache = self.dirs(case, name, j)
                if not warm:
                    self.fresh(out, cache)
                run_tpl = tpl[0] if isinstance(tpl, tuple) else tpl
                so = os.path.join(self.work, 'stdout.txt') if is_sd else None
                r = self.execute(fill(run_tpl, list=listfile, j=j, out=out, cache=cache),
                                 re.sub(r'\W', '_', name), stdout_path=so)
                if is_sd:
                    st = self.sdfetch_statuses(so)
                    r['statuses'] = st
                    note = self.fmt_counts(st)
                    if self.a.sd_has_out:
                        note += '; out files %d' % self.count_files(out)
                else:
                    note = 'files %d' % self.count_files(out)
                if r['capped']:
                    note += '; CAPPED at %ds' % self.a.timeout
                notes[name] = note
                self.record(case, j, name, lines, r, rep, note=note)
                samples[name].append(r)
        for name, _, is_sd in tools:
            note = notes[name]
            if warm and is_sd:
                bad = [r['requests'] for r in samples[name] if r['requests']]
                note += '; requests: %s' % ('0 as required' if not bad else 'NOT ZERO (%s)' % bad)
            if case.startswith('dup5') and is_sd:
                uniq = lines // 5
                got = sorted(set(r['requests'] for r in samples[name]))
                note += '; %s' % ('requests = unique URLs' if got == [uniq] else 'requests %s != %d unique' % (got, uniq))
            self.add_row(case, j, name, lines, samples[name], note)
        for name, _, _ in tools:
            for d in self.dirs(case, name, j):
                shutil.rmtree(d, ignore_errors=True)

    # -- restore: the warm run over a cache saved and restored with plain tar
    def restore_case(self, listfile, j, template):
        """Fills a cache with one untimed cold run, archives it with plain `tar cf` (no
        --xattrs, as CI cache steps do), and times the warm command, each run over a fresh
        `tar xf` extraction into a new directory (output dir kept, as in the warm case)."""
        lines = sum(1 for _ in open(listfile))
        out, cache = self.dirs('restore', 'sdfetch', j)
        self.fresh(out, cache)
        r = self.execute(fill(template, list=listfile, j=j, out=out, cache=cache), 'prep',
                         stdout_path=os.path.join(self.work, 'prep.stdout'))
        log('  restore    j=%-3d prep (untimed cold run) %.3fs rc=%s req=%d' % (j, r['wall'], r['rc'], r['requests']))
        archive = os.path.join(self.work, 'restore-cache.tar')
        subprocess.run(['tar', 'cf', archive, '-C', cache, '.'], check=True)
        shutil.rmtree(cache, ignore_errors=True)
        samples = []
        note = ''
        for rep in range(1, self.a.runs + 1):
            restored = cache + '-restored'
            shutil.rmtree(restored, ignore_errors=True)
            os.makedirs(restored)
            subprocess.run(['tar', 'xf', archive, '-C', restored], check=True)
            so = os.path.join(self.work, 'stdout.txt')
            r = self.execute(fill(template, list=listfile, j=j, out=out, cache=restored), 'restore', stdout_path=so)
            st = self.sdfetch_statuses(so)
            r['statuses'] = st
            note = self.fmt_counts(st) + '; cache restored by tar xf (archive made without --xattrs)'
            self.record('restore', j, 'sdfetch', lines, r, rep, note=note)
            samples.append(r)
            shutil.rmtree(restored, ignore_errors=True)
        bad = [x['requests'] for x in samples if x['requests']]
        note += '; requests: %s' % ('0 as required' if not bad else 'NOT ZERO (%s)' % bad)
        self.add_row('restore', j, 'sdfetch', lines, samples, note)
        os.unlink(archive)
        shutil.rmtree(out, ignore_errors=True)

    # -- memory on a 1M-line list
    def mem_case(self, case, listfile, j, template, note, timeout, cache=None):
        """cache: an existing cache to run over (kept), else a fresh one (removed)."""
        lines = sum(1 for _ in open(listfile))
        out, fresh_cache = self.dirs(case, 'sdfetch', j)
        self.fresh(out)
        if cache is None:
            cache = fresh_cache
            self.fresh(cache)
        so = os.path.join(self.work, 'stdout.txt')
        r = self.execute(fill(template, list=listfile, j=j, out=out, cache=cache), case,
                         stdout_path=so, timeout=timeout)
        st = self.sdfetch_statuses(so)
        r['statuses'] = st
        done = sum(st.values())
        extra = '%s; %s' % (note, self.fmt_counts(st))
        if r['capped']:
            extra += '; CAPPED at %ds after %d result lines (RSS is the peak so far)' % (timeout, done)
        rss = r['rss_mib']
        if rss is not None:
            extra += '; peak RSS %s 100 MB target' % ('within' if rss * 2**20 <= 100e6 else 'OVER')
        self.record(case, j, 'sdfetch', lines, r, 1, note=extra)
        self.add_row(case, j, 'sdfetch', lines, [r], extra, done=done if r['capped'] else None)
        shutil.rmtree(out, ignore_errors=True)
        if cache == fresh_cache:
            shutil.rmtree(cache, ignore_errors=True)
        os.unlink(so)

    # -- a run's cost over a large cache
    def scale_case(self, j, template, small, entries):
        """Builds the caches as users do, through real fetch runs against the bench's nginx
        (unique `?e=N` URLs of the thumbs PNGs, no -o): `small`, 200,000 (when `entries` is
        larger) and `entries` entries; the cold run that fills the largest is a row itself
        (end-of-run trim included). Then, side by side in one run: 10 new URLs stored into
        the small and the largest cache; `small` warm URLs over each cache; and `stats`,
        `clean`, `clean --max-size` (to nine tenths) and `verify` over the largest. Every
        row gives wall, CPU and peak RSS: on a shared machine CPU is the steadier number."""
        a = self.a
        thumbs = os.path.join(a.www, a.thumbs)
        pngs = []
        with open(os.path.join(thumbs, 'manifest.tsv')) as f:
            for line in f:
                p = line.rstrip('\n').split('\t')
                if len(p) >= 5 and p[1] == 'png':
                    pngs.append((int(p[2]), p[0]))
        pngs.sort()
        # A few distinct images, so entries share files as a real cache's aliases do, at most 1 in 64.
        paths = [p for _, p in pngs[:64]]
        url = lambda i: '%s/%s/%s?e=%d' % (a.base, a.thumbs, paths[i % len(paths)], i)
        root = os.path.join(self.work, 'scale')
        subprocess.run(['rm', '-rf', root])
        os.makedirs(root)
        plain = re.sub(r'\s-o\s+\{out\}', '', template)
        sizes = [small] + ([200000] if entries > 200000 else []) + [entries]
        caches = {}
        for n in sizes:
            cache = os.path.join(root, 'cache-%d' % n)
            lst = write_list(os.path.join(root, 'fill-%d.txt' % n), [url(i) for i in range(n)])
            r = self.execute(fill(plain, list=lst, j=j, out=root, cache=cache), 'scale-fill', timeout=a.fill_timeout)
            log('  scale: filled %d entries by a cold run in %.1f s (cpu %.1f s, rss %.1f MiB, rc %s)' % (
                n, r['wall'], r['cpu_s'] or 0, r['rss_mib'] or 0, r['rc']))
            if n == entries:
                self.record('scale', j, 'cold %s' % format(n, ','), n, r, 1)
                self.add_row('scale', j, 'cold %s' % format(n, ','), n, [r], 'cold run filling the cache, '
                             'end-of-run trim included; peak RSS target 100 MB')
            os.unlink(lst)
            caches[n] = cache
        bin_ = a.sdfetch_bin
        reps = range(a.runs)
        # 10 new URLs into the small and the large cache, interleaved; each rep its own URLs.
        samples = {n: [] for n in (small, entries)}
        for rep in reps:
            for n in (small, entries):
                lst = write_list(os.path.join(root, 'new.txt'), [url(10000000 + 100 * rep + i) for i in range(10)])
                r = self.execute(fill(plain, list=lst, j=j, out=root, cache=caches[n]), 'scale-new')
                self.record('scale', j, '10 new into %s' % format(n, ','), 10, r, rep + 1)
                samples[n].append(r)
        for n in (small, entries):
            self.add_row('scale', j, '10 new into %s' % format(n, ','), 10, samples[n],
                         'store + end-of-run trim; target: within 1.2x of the small cache, under 50 MB')
        # Warm: the first `small` URLs, in every cache (one untimed warm-up each: a first hit writes its use).
        # A warm cell takes a fraction of a second, so it runs more times than RUNS (--scale-warm-runs):
        # single runs of one cell spread by a fifth on a shared machine.
        warm = write_list(os.path.join(root, 'warm.txt'), [url(i) for i in range(small)])
        samples = {n: [] for n in sizes}
        for rep in range(max(a.runs, a.scale_warm_runs) + 1):
            for n in sizes:
                r = self.execute(fill(plain, list=warm, j=j, out=root, cache=caches[n]), 'scale-warm')
                if rep == 0:
                    continue
                self.record('scale', j, '%s warm over %s' % (format(small, ','), format(n, ',')), small, r, rep)
                samples[n].append(r)
        for n in sizes:
            bad = [x['requests'] for x in samples[n] if x['requests']]
            self.add_row('scale', j, '%s warm over %s' % (format(small, ','), format(n, ',')), small, samples[n],
                         'target: within 1.2x of over %s; requests: %s' % (
                             format(small, ','), '0 as required' if not bad else 'NOT ZERO (%s)' % bad))
        # Commands over the largest cache, once each (clean --max-size last: it removes a tenth).
        big = caches[entries]
        du = int(subprocess.run(['du', '-sb', big], capture_output=True, text=True).stdout.split()[0])
        for name, cmd in (('stats', '%s stats --cache-dir %s' % (bin_, big)),
                          ('clean (nothing to remove)', '%s clean --cache-dir %s' % (bin_, big)),
                          ('verify', '%s verify --cache-dir %s' % (bin_, big)),
                          ('clean --max-size 90%', '%s clean --cache-dir %s --max-size %d' % (bin_, big, du * 9 // 10))):
            r = self.execute(cmd, 'scale-cmd', timeout=a.fill_timeout)
            self.record('scale', j, name, entries, r, 1)
            self.add_row('scale', j, '%s over %s' % (name, format(entries, ',')), entries, [r],
                         'target: peak RSS at most 100 MB%s' % ('; under 2 s' if name.startswith('clean (') else ''))
        # rm -rf: shutil.rmtree takes minutes over a million files.
        subprocess.run(['rm', '-rf', root])
        return None

    # -- clean over a filled cache
    def clean_case(self, fill_list, entries):
        a = self.a
        base_cache = os.path.join(self.work, 'clean-filled')
        self.fresh(base_cache)
        so = os.path.join(self.work, 'fill.stdout')
        fill_cmd = fill(a.fill_cmd, list=fill_list, cache=base_cache, n=entries, base=a.base,
                        bin=a.sdfetch_bin, j=32)
        log('  clean: filling %s with %d entries: %s' % (base_cache, entries, fill_cmd))
        r = self.execute(fill_cmd, 'fill', stdout_path=so, timeout=a.fill_timeout)
        st = self.sdfetch_statuses(so)
        nfiles = self.count_files(base_cache)
        note = 'fill (BENCH_FILL_CMD): %s; %d files in cache dir' % (self.fmt_counts(st), nfiles)
        if r['capped']:
            note += '; CAPPED at %ds' % a.fill_timeout
        self.record('clean-fill', 32, 'sdfetch', entries, r, 1, note=note)
        self.add_row('clean-fill', 32, 'sdfetch', entries, [r], note)
        runs = []
        for rep in range(1, a.runs + 1):
            copy = os.path.join(self.work, 'clean-copy')
            shutil.rmtree(copy, ignore_errors=True)
            # hard-linked copy: every run starts from the same filled cache
            subprocess.run(['cp', '-al', base_cache, copy], check=True)
            so = os.path.join(self.work, 'clean.stdout')
            r = self.execute(fill(a.clean_cmd, cache=copy, bin=a.sdfetch_bin), 'clean', stdout_path=so)
            left = self.count_files(copy)
            summary = open(so, errors='replace').read().strip().replace('\n', ' ')[:160]
            r['left_files'] = left
            note = '%d -> %d files; stdout: %s' % (nfiles, left, summary or '-')
            if r['rc'] != 0:
                note += '; stderr: %s' % ' '.join(r['stderr_tail'])[:160]
            self.record('clean', 0, 'sdfetch clean', entries, r, rep, note=note)
            runs.append(r)
            shutil.rmtree(copy, ignore_errors=True)
        self.add_row('clean', 0, 'sdfetch clean', entries, runs, note)
        shutil.rmtree(base_cache, ignore_errors=True)


# ---------------------------------------------------------------- the C helpers (decode pass, floor check)

def build_helper(a, name, libraries):
    """Compiles Scripts/bench.d/NAME.c into the work dir; its path, or None."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)), name + '.c')
    binary = os.path.join(a.work, name)
    result = subprocess.run(['cc', '-O2', '-o', binary, source] + ['-l' + x for x in libraries],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    if result.returncode != 0:
        log('bench: %s did not build: %s' % (name, result.stdout.decode('utf-8', 'replace')[-300:]))
        return None
    return binary


# ---------------------------------------------------------------- sdfetch probing

def probe(a, args):
    """Exit status of sdfetch with `args` on an empty list and a scratch cache."""
    d = os.path.join(a.work, 'probe')
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, 'out'))
    empty = os.path.join(d, 'empty.txt')
    open(empty, 'w').close()
    argv = [x.replace('{cache}', os.path.join(d, 'cache')).replace('{out}', os.path.join(d, 'out'))
            .replace('{list}', empty) for x in args]
    try:
        p = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=60)
        return p.returncode, p.stderr.decode('utf-8', 'replace').strip()
    except subprocess.TimeoutExpired:
        return -1, 'timeout'
    finally:
        shutil.rmtree(d, ignore_errors=True)


def effective_template(a):
    """SDFETCH_CMD with options the binary rejects (exit 2) removed: the
    template is written for the final CLI (-q, -o DIR); older binaries only
    know --cache-dir, -j and FILE."""
    tpl = a.sdfetch_cmd.replace('{bin}', shlex.quote(a.sdfetch_bin))
    dropped = []
    for opt, nargs in (('-q', 0), ('--quiet', 0), ('-o', 1), ('--output', 1)):
        toks = shlex.split(tpl)
        if opt not in toks:
            continue
        i = toks.index(opt)
        rc, err = probe(a, [a.sdfetch_bin, '--cache-dir', '{cache}', '-j', '1'] + toks[i:i + 1 + nargs] + ['{list}'])
        if rc == 2:
            dropped.append(' '.join(toks[i:i + 1 + nargs]))
            del toks[i:i + 1 + nargs]
            tpl = ' '.join(t if t.startswith('{') and t.endswith('}') else shlex.quote(t) for t in toks)
    return tpl, dropped


# ---------------------------------------------------------------- table

def table(rows):
    sd, per_cell = {}, {}
    for r in rows:
        if r['tool'].startswith('sdfetch'):
            sd.setdefault((r['case'], r['j']), r['median'])
        per_cell[(r['case'], r['j'])] = per_cell.get((r['case'], r['j']), 0) + 1
    hdr = ['case', 'J', 'tool', 'lines', 'median s', 'min–max s', 'CPU s', 'nginx CPU s', 'URLs/s', 'requests recv',
           'peak RSS MiB', 'median / sdfetch', 'rc', 'notes']
    out = ['| ' + ' | '.join(hdr) + ' |', '|' + '---|' * len(hdr)]
    for r in rows:
        ref = sd.get((r['case'], r['j']))
        reqs = str(r['req_min']) if r['req_min'] == r['req_max'] else '%d–%d' % (r['req_min'], r['req_max'])
        alone = per_cell[(r['case'], r['j'])] == 1
        ratio = '-' if not ref or alone else ('%.2f' % (r['median'] / ref))
        cells = [r['case'], str(r['j']) if r['j'] else '-', r['tool'], str(r['lines']),
                 '%.3f' % r['median'], '%.3f–%.3f' % (r['min'], r['max']),
                 '-' if r.get('cpu') is None else '%.2f' % r['cpu'],
                 '-' if r.get('nginx_cpu') is None else '%.2f' % r['nginx_cpu'],
                 '%.0f' % r['urls_per_s'] if r['urls_per_s'] and r['case'] != 'clean' else '-', reqs,
                 '-' if r['rss_mib'] is None else '%.1f' % r['rss_mib'], ratio,
                 ','.join(str(x) for x in r['rc']) + (' CAPPED' if r['capped'] else ''),
                 r['note'].replace('|', '/')]
        out.append('| ' + ' | '.join(cells) + ' |')
    return '\n'.join(out)


def floor_lines(by, case, j, peer, peer_row):
    """The floor's verdict for a cold or dup5 cell, judged on tmpfs only: on ext4 without a
    journal each new inode costs what the allocator's scan past recently freed inodes
    costs, which changes from run to run (curl's own cell moved 0.26-1.22 s between runs)."""
    cold = case.replace('dup5', 'cold')
    f = by.get((cold, j, FLOOR))
    if not f or f.get('cpu') is None or f.get('nginx_cpu') is None:
        return []
    if not case.endswith('-tmpfs'):
        return ['%s -j %d: floor not judged on ext4 (inode cost varies between runs: %s here %.3f-%.3f s, '
                'floor %.3f-%.3f s); see %s-tmpfs' % (case, j, peer, peer_row['min'], peer_row['max'],
                                                      f['min'], f['max'], case)]
    return [floor_line(case, j, f, peer, peer_row['median'])]


def floor_line(case, j, floor, peer, peer_median):
    """Whether the 1.3x target fits this machine at all: the floor tool's CPU (curl's
    download, a second copy, the default check's hash and inflate) plus the server's,
    spread perfectly over every core, against the peer's median / 1.3."""
    cores = os.cpu_count() or 1
    need = floor['cpu'] + floor['nginx_cpu']
    best = need / cores
    goal = peer_median / 1.3
    verdict = 'within reach here' if best <= goal else 'out of reach on %d cores by %.0f%%' % (
        cores, 100 * (best / goal - 1))
    return ('%s -j %d: floor (%s) %.2f s CPU + nginx %.2f s = %.2f s over %d cores '
            '= %.3f s at best, vs the target %.3f s (%s / 1.3): %s' % (
                case, j, FLOOR, floor['cpu'], floor['nginx_cpu'], need, cores, best, goal, peer, verdict))


def targets(rows, a):
    """sdfetch's performance targets, checked against this run's rows."""
    by = {(r['case'], r['j'], r['tool']): r for r in rows}
    out = []

    def verdict(ok):
        return 'met' if ok else 'NOT met'
    for (case, j, tool), r in sorted(by.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        if tool != 'sdfetch':
            continue
        if case.startswith('cold') and (case, j, 'curl') in by:
            c = by[(case, j, 'curl')]
            out.append(case + ' -j %d: sdfetch %.3f s vs curl --parallel %.3f s = %.2fx (>= 1.3x): %s' % (
                j, r['median'], c['median'], c['median'] / r['median'], verdict(r['median'] * 1.3 <= c['median'])))
            out.extend(floor_lines(by, case, j, 'curl', c))
        if case == 'full' and (case, j, 'curl + decode') in by:
            c = by[(case, j, 'curl + decode')]
            decoders = by.get(('full', 0, 'decoders alone'))
            line = 'full -j %d: sdfetch %.3f s vs curl + decode pass %.3f s (faster): %s' % (
                j, r['median'], c['median'], verdict(r['median'] < c['median']))
            # curl and the bare decoders in this cell's own conditions: the `curl + decode`
            # row is exactly those two, run beside sdfetch (a cold cell's curl may have met
            # another ext4 state).
            if c.get('cpu') is not None and r.get('cpu'):
                bound = 1.15 * c['cpu']
                line += '; CPU %.2f s vs 1.15 x (curl + decoders %.2f s%s) = %.2f s: %s' % (
                    r['cpu'], c['cpu'], ', decoders alone %.2f s' % decoders['cpu'] if decoders else '',
                    bound, verdict(r['cpu'] <= bound))
                least = by.get((case, j, FULL_FLOOR))
                if least and least.get('cpu') is not None:
                    line += '; the least any tool spends on this work (%s) %.2f s: %s' % (
                        FULL_FLOOR, least['cpu'], 'within the bound' if least['cpu'] <= bound else
                        'over the bound by %.0f%%' % (100 * (least['cpu'] / bound - 1)))
            out.append(line)
        if case.startswith('dup5'):
            uniq = r['lines'] // 5
            w = by.get((case, j, 'wget2'))
            ok = r['req_max'] == uniq and (w is None or r['median'] * 1.3 <= w['median'])
            out.append(case + ' -j %d: requests %s for %d unique URLs; sdfetch %.3f s vs wget2 %s: %s' % (
                j, r['req_max'] if r['req_min'] == r['req_max'] else '%d-%d' % (r['req_min'], r['req_max']),
                uniq, r['median'], '%.3f s' % w['median'] if w else 'not run', verdict(ok)))
            if w:
                out.extend(floor_lines(by, case, j, 'wget2', w))
        if case in ('warm', 'restore'):
            out.append('%s -j %d: %d requests, %.0f URLs/s over %d URLs (0 requests, >= 100,000 URLs/s): %s' % (
                case, j, r['req_max'], r['urls_per_s'] or 0, r['lines'],
                verdict(r['req_max'] == 0 and (r['urls_per_s'] or 0) >= 100000)))
        if case.startswith('mem') and r['rss_mib'] is not None:
            scale = '' if r['lines'] >= 1000000 else ' (list has %d lines, not 1,000,000: indicative only)' % r['lines']
            out.append('%s: peak RSS %.1f MiB (<= 100 MB)%s: %s' % (
                case, r['rss_mib'], scale, verdict(r['rss_mib'] * 2**20 <= 100e6 and not r['capped'])))
    scale = {r['tool']: r for r in rows if r['case'] == 'scale'}
    small_tools = [t for t in scale if t.startswith('10 new into') or ' warm over ' in t]
    for prefix in sorted(set(t.rsplit(' ', 1)[0] for t in small_tools)):
        cells = sorted((int(t.rsplit(' ', 1)[1].replace(',', '')), scale[t]) for t in small_tools if t.startswith(prefix + ' '))
        (n0, ref), rest = cells[0], cells[1:]
        for n, big in rest:
            ratio = (big['cpu'] or 0) / ref['cpu'] if ref.get('cpu') else float('inf')
            # The cells' runs alternate (one of each, then again): the median of the runs'
            # ratios cancels the machine's drift between rounds, which the ratio of the
            # medians keeps.
            pairs = [b / s for b, s in zip(big.get('cpus') or [], ref.get('cpus') or []) if b and s]
            paired = statistics.median(pairs) if pairs else ratio
            out.append('scale: %s %s vs %s: CPU %.3f s vs %.3f s; median of %d paired runs\' ratios %.3fx '
                       '(ratio of medians %.2fx; <= 1.2x), wall %.3f vs %.3f s, %.1f vs %.1f MiB: %s' % (
                prefix, format(n, ','), format(n0, ','), big['cpu'] or 0, ref['cpu'] or 0, len(pairs), paired, ratio,
                big['median'], ref['median'], big['rss_mib'] or 0, ref['rss_mib'] or 0, verdict(paired <= 1.2)))
    for t, r in scale.items():
        if t not in small_tools and r['rss_mib'] is not None:
            out.append('scale: %s: peak RSS %.1f MiB (<= 100 MB), wall %.2f s, CPU %.2f s: %s' % (
                t, r['rss_mib'], r['median'], r['cpu'] or 0, verdict(r['rss_mib'] * 2**20 <= 100e6)))
    c = by.get(('clean', 0, 'sdfetch clean'))
    if c:
        scale = '' if c['lines'] >= 100000 else ' (%d entries, not 100,000: indicative only)' % c['lines']
        out.append('clean: %.3f s over %d entries (< 1 s)%s: %s' % (
            c['median'], c['lines'], scale, verdict(c['median'] < 1 and c['rc'] == [0])))
    return out


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description='Scripts/bench driver (run it through Scripts/bench)')
    ap.add_argument('--base', required=True, help='http://127.0.0.1:PORT')
    ap.add_argument('--www', required=True, help='nginx root')
    ap.add_argument('--corpus', required=True, help='corpus dir name under --www (mixed profile)')
    ap.add_argument('--thumbs', required=True, help='thumbs corpus dir name under --www')
    ap.add_argument('--access-log', required=True)
    ap.add_argument('--nginx-pid-file', default='', help="nginx master's pid file: the nginx CPU s column")
    ap.add_argument('--work', required=True)
    ap.add_argument('--results', required=True)
    ap.add_argument('--cases', default='cold,tmpfs,full,dup,warm,restore,mem,scale,clean')
    ap.add_argument('--tmpfs-work', default='/dev/shm/sdfetch-bench-%d' % os.getuid())
    ap.add_argument('--js', default='6,32')
    ap.add_argument('--runs', type=int, default=3)
    ap.add_argument('--warmup', type=int, default=1)
    ap.add_argument('--warm-lines', type=int, default=20000)
    ap.add_argument('--warm-peers', default='wget2')
    ap.add_argument('--warm-js', default='')
    ap.add_argument('--mem-lines', type=int, default=1000000)
    ap.add_argument('--mem-net', type=int, default=0)
    ap.add_argument('--mem-net-cap', type=float, default=300)
    ap.add_argument('--clean-entries', type=int, default=100000)
    ap.add_argument('--clean-force', type=int, default=0)
    ap.add_argument('--scale-entries', type=int, default=1000000)
    ap.add_argument('--scale-small', type=int, default=10000)
    ap.add_argument('--scale-warm-runs', type=int, default=15)
    ap.add_argument('--timeout', type=float, default=300)
    ap.add_argument('--fill-timeout', type=float, default=900)
    ap.add_argument('--peers', default='curl,aria2c,wget2')
    ap.add_argument('--dup-peers', default='curl,wget2')
    ap.add_argument('--sdfetch-bin', required=True)
    ap.add_argument('--sdfetch-cmd', required=True)
    ap.add_argument('--offline-flag', default='--offline')
    ap.add_argument('--clean-cmd', required=True)
    ap.add_argument('--fill-cmd', required=True)
    ap.add_argument('--time-bin', default='/usr/bin/time')
    a = ap.parse_args()
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    os.makedirs(a.work, exist_ok=True)
    os.makedirs(a.results, exist_ok=True)
    LOGFILE[0] = open(os.path.join(a.results, 'progress.log'), 'a')
    cases = [c for c in a.cases.split(',') if c]
    known = ('cold', 'tmpfs', 'full', 'dup', 'warm', 'restore', 'mem', 'scale', 'clean')
    unknown = [c for c in cases if c not in known]
    if unknown:
        sys.exit('bench: unknown case(s) %s (cases: %s)' % (','.join(unknown), ','.join(known)))
    js = [int(x) for x in re.split(r'[ ,]+', a.js.strip()) if x]
    peers = [p for p in a.peers.split(',') if p]

    # sdfetch's command line, adapted to what the binary accepts
    sd_tpl, dropped = effective_template(a)
    a.sd_has_out = '{out}' in sd_tpl
    lists_dir = os.path.join(a.work, 'lists')
    os.makedirs(lists_dir, exist_ok=True)
    urls = corpus_urls(a.base, a.corpus, os.path.join(a.www, a.corpus))
    thumbs = corpus_urls(a.base, a.thumbs, os.path.join(a.www, a.thumbs))
    n = len(urls)
    header = ['sdfetch command: %s' % sd_tpl]
    if dropped:
        header.append('options rejected by this sdfetch binary (exit 2) and dropped: %s' % ', '.join(dropped))
    for h in header:
        log('bench: ' + h)

    r = Runner(a)
    sd_tool = ('sdfetch', sd_tpl, True)
    peer_tools = [(p, PEERS[p], False) for p in peers]
    # The least work the cold case asks of any tool: curl's download, the second inode
    # per image (the cache entry beside the -o file), then the default check's hash and
    # PNG inflate at the fastest this machine has (Scripts/bench.d/floor-check.c).
    checker = build_helper(a, 'floor-check', ['crypto', 'deflate']) if 'curl' in peers else None
    floor_tools = [(FLOOR, PEERS['curl'] + ' && cp -r {out} {cache}/copy && ' + shlex.quote(checker) + ' {out}',
                    False)] if checker else []
    if 'curl' in peers and not checker:
        header.append('floor not run: Scripts/bench.d/floor-check.c did not build (cc, libssl-dev, libdeflate-dev)')

    if 'cold' in cases:
        lst = write_list(os.path.join(lists_dir, 'unique.txt'), urls)
        for j in js:
            log('bench: cold, %d URLs, -j %d' % (n, j))
            r.fetch_case('cold', lst, j, [sd_tool] + peer_tools + floor_tools)
    if 'tmpfs' in cases:
        if subprocess.run(['stat', '-f', '-c', '%T', os.path.dirname(a.tmpfs_work)],
                          capture_output=True, text=True).stdout.strip() != 'tmpfs':
            header.append('tmpfs not run: %s is not on tmpfs' % os.path.dirname(a.tmpfs_work))
        else:
            os.makedirs(a.tmpfs_work, exist_ok=True)
            unique = write_list(os.path.join(lists_dir, 'unique.txt'), urls)
            d = urls * 5
            random.Random('sdfetch-bench/dup5').shuffle(d)
            dup5 = write_list(os.path.join(lists_dir, 'dup5.txt'), d)
            for j in js:
                log('bench: cold-tmpfs, %d URLs, -j %d (outputs and caches on tmpfs)' % (n, j))
                r.fetch_case('cold-tmpfs', unique, j,
                             [sd_tool] + [t for t in peer_tools if t[0] in ('curl', 'wget2')] + floor_tools)
                log('bench: dup5-tmpfs, %d lines (%d unique), -j %d (outputs and caches on tmpfs)' % (len(d), n, j))
                r.fetch_case('dup5-tmpfs', dup5, j, [sd_tool] + [(p, PEERS[p], False) for p in ('wget2',) if p in PEERS])
            shutil.rmtree(a.tmpfs_work, ignore_errors=True)
    if 'full' in cases:
        decoder = build_helper(a, 'decode-pass', ['png', 'jpeg', 'gif', 'webp', 'webpdemux'])
        if decoder is None:
            header.append('full not run: Scripts/bench.d/decode-pass.c did not build (cc, libpng-dev, libjpeg62-turbo-dev, libgif-dev, libwebp-dev)')
        else:
            lst = write_list(os.path.join(lists_dir, 'unique.txt'), urls)
            full_tpl = sd_tpl.replace('{list}', '--verify full {list}')
            corpus_dir = os.path.join(a.www, a.corpus)
            for j in js:
                log('bench: full, %d URLs, -j %d: sdfetch --verify full against curl --parallel + decode pass' % (n, j))
                r.fetch_case('full', lst, j, [
                    ('sdfetch', full_tpl, True),
                    ('curl + decode', PEERS['curl'] + ' && ' + shlex.quote(decoder) + ' {out}', False),
                ] + ([(FULL_FLOOR, PEERS['curl'] + ' && cp -r {out} {cache}/copy && ' + shlex.quote(checker)
                       + ' --hash-only {out} && ' + shlex.quote(decoder) + ' {out}', False)] if checker else []))
            # The floor: the same decoders over the same files, with no network and no cache.
            runs = [r.execute(shlex.quote(decoder) + ' ' + shlex.quote(corpus_dir), 'decoders') for _ in range(a.runs)]
            r.add_row('full', 0, 'decoders alone', n, runs, 'decode-pass over the corpus files: the CPU floor of a full check')
    if 'dup' in cases:
        d = urls * 5
        random.Random('sdfetch-bench/dup5').shuffle(d)
        lst = write_list(os.path.join(lists_dir, 'dup5.txt'), d)
        for j in js:
            log('bench: dup5, %d lines (%d unique), -j %d' % (len(d), n, j))
            r.fetch_case('dup5', lst, j, [sd_tool] + [(p, PEERS[p], False) for p in a.dup_peers.split(',') if p in PEERS])
    if 'warm' in cases:
        lst = write_variants(os.path.join(lists_dir, 'warm.txt'), urls, a.warm_lines, 'v')
        wp = [p for p in a.warm_peers.split(',') if p in WARM_PEERS]
        # no transfer happens in a warm sdfetch run: one J (the largest) is enough
        for j in ([int(x) for x in a.warm_js.split(',') if x] or [max(js)]):
            log('bench: warm, %d unique URLs, -j %d' % (a.warm_lines, j))
            tools = [('sdfetch', (sd_tpl, sd_tpl), True)]
            tools += [(WARM_PEERS[p][0], (WARM_PEERS[p][1], PEERS[p]), False) for p in wp]
            r.fetch_case('warm', lst, j, tools, warm=True)
    if 'restore' in cases:
        lst = write_variants(os.path.join(lists_dir, 'warm.txt'), urls, a.warm_lines, 'v')
        j = max(js)
        log('bench: restore, %d unique URLs over a tar-restored cache, -j %d' % (a.warm_lines, j))
        r.restore_case(lst, j, sd_tpl)
    if 'mem' in cases:
        j = max(js)
        lst = write_cycle(os.path.join(lists_dir, 'mem-cycle.txt'), urls, a.mem_lines)
        log('bench: mem, %d lines cycling %d URLs, -j %d' % (a.mem_lines, n, j))
        r.mem_case('mem-cycle', lst, j, sd_tpl, '%d lines cycling the %d corpus URLs, against nginx' % (a.mem_lines, n), a.timeout)
        os.unlink(lst)
        lst = write_variants(os.path.join(lists_dir, 'mem-unique.txt'), thumbs, a.mem_lines, 'i')
        rc, err = probe(a, [a.sdfetch_bin, '--cache-dir', '{cache}', a.offline_flag, '{list}'])
        if rc == 2:
            log('bench: mem-offline skipped: sdfetch rejects %s (%s)' % (a.offline_flag, err.splitlines()[0] if err else 'exit 2'))
            header.append('mem-offline not run: this sdfetch rejects %s' % a.offline_flag)
        else:
            log('bench: mem-offline, %d unique URLs, %s' % (a.mem_lines, a.offline_flag))
            tpl = sd_tpl.replace('{list}', a.offline_flag + ' {list}')
            r.mem_case('mem-offline', lst, j, tpl, '%d unique URLs, %s on an empty cache (every URL offline-miss)' % (a.mem_lines, a.offline_flag), a.timeout)
        if a.mem_net:
            log('bench: mem-net, %d unique URLs against nginx, capped at %ds' % (a.mem_lines, a.mem_net_cap))
            r.mem_case('mem-net', lst, j, sd_tpl, '%d unique URLs (thumbs ?i=N) against nginx' % a.mem_lines, a.mem_net_cap)
        os.unlink(lst)
    if 'scale' in cases:
        j = max(js)
        log('bench: scale, caches of %d and %d entries filled by cold runs; 10 new, %d warm, commands' % (
            a.scale_small, a.scale_entries, a.scale_small))
        skipped = r.scale_case(j, sd_tpl, a.scale_small, a.scale_entries)
        if skipped:
            header.append(skipped)
    if 'clean' in cases:
        rc, err = probe(a, shlex.split(fill(a.clean_cmd, bin=a.sdfetch_bin)))
        if rc != 0 and not a.clean_force:
            first = err.splitlines()[0] if err else ''
            log('bench: clean skipped: probe on an empty cache exited %d (%s); BENCH_CLEAN_FORCE=1 runs it anyway' % (rc, first))
            header.append('clean not run: `%s` on an empty cache exited %d (%s)' % (a.clean_cmd, rc, first))
        else:
            lst = write_variants(os.path.join(lists_dir, 'fill.txt'), thumbs, a.clean_entries, 'k')
            log('bench: clean over %d entries' % a.clean_entries)
            r.clean_case(lst, a.clean_entries)

    md = table(r.rows)
    header.append("median / sdfetch: the tool's median time divided by sdfetch's in the same case and J "
                  '(above 1: sdfetch was faster); URLs/s = lines / median')
    text = '\n'.join('- ' + h for h in header) + '\n\n' + md + '\n'
    checks = targets(r.rows, a)
    if checks:
        text += '\nPerformance targets, this run:\n' + '\n'.join('- ' + c for c in checks) + '\n'
    with open(os.path.join(a.results, 'table.md'), 'w') as f:
        f.write(text)
    with open(os.path.join(a.results, 'rows.json'), 'w') as f:
        json.dump(r.rows, f, indent=1)
    print(text)


if __name__ == '__main__':
    main()
