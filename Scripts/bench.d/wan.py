#!/usr/bin/env python3
"""The wan case of Scripts/bench: many hosts, latency, slow, dead and throttling servers.

Python 3 stdlib only.  Scripts/bench makes the network namespace (bench.d/wan-net.sh up)
and removes it on exit; this driver runs inside it, shape after shape:

  1. writes the shape's host names (h*, slow*, dead*, throttle*, reset*, gone*.wan.test),
     their addresses (127.1.x.y), the resolver's hosts file, the nftables ruleset, the nginx
     configuration, and a shuffled URL list (the corpus's images spread over the names);
  2. starts, inside the namespace, dnsmasq (127.0.53.53: the names, NXDOMAIN for gone*),
     nginx (every name on ports 80 and 443, HTTP/2 on 443, a latency per response with
     the echo module's echo_sleep), and the throttling host's backend (bench.d/wan-throttle.py);
  3. measures the shape's byte term (the fetchable URLs from one host with no latency);
  4. runs every tool, each cell time-boxed, with `ip netns exec`, fresh output, cache and HOME;
  5. stops the servers; after the last shape writes table.md, rows.json and runs.jsonl.

See Scripts/bench.d/README.md for the method, the lower bound and each tool's settings.
"""
import argparse
import collections
import hashlib
import json
import math
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time

from benchcommon import CURRENT, LABEL, LOGFILE, fill, log, on_signal

LABEL[0] = 'wan '

DOMAIN = 'wan.test'
RESOLVER = '127.0.53.53'
DIRECT = 'direct.' + DOMAIN  # no latency: the byte term is measured against it
KINDS = ('h', 'slow', 'dead', 'throttle', 'reset', 'gone')
FETCHABLE = ('h', 'slow', 'throttle')
DEFAULT_SHAPES = ';'.join([
    'dozens:hosts=58,urls=2000,dead=5,slow=3,throttle=1,reset=1,nxdomain=2,tls=0',
    'dozens-h2:hosts=58,urls=2000,dead=5,slow=3,throttle=1,reset=1,nxdomain=2,tls=1',
    'tail:hosts=2000,urls=4000,nxdomain=10,tls=0',
    'tail-h2:hosts=2000,urls=4000,nxdomain=10,tls=1',
])
BIG_SHAPE = 'huge:hosts=10000,urls=100000,dead=5,slow=3,throttle=1,reset=1,nxdomain=20,tls=0'
# Like a real web image list (an image-text dataset's URLs): thousands of names, most with
# one or two URLs and a few with hundreds, 60% HTTPS, latencies from 20 to 400 ms, dead,
# unresolvable, slow and throttling hosts, 404s, HTML pages served as 200 and redirects.
WEB_SHAPE = ('web:hosts=4000,urls=10000,dead=40,slow=10,throttle=3,reset=5,nxdomain=60,tls=0.6,'
             'spread=1,lat_min=20,lat_max=400,notfound=0.03,html=0.02,redirect=0.03,tohttps=0.05')
SHAPE_KEYS = ('hosts', 'urls', 'dead', 'slow', 'throttle', 'reset', 'nxdomain', 'tls', 'spread', 'lat_min',
              'lat_max', 'notfound', 'html', 'redirect', 'tohttps')
FLOAT_KEYS = ('tls', 'spread', 'notfound', 'html', 'redirect', 'tohttps')


# ---------------------------------------------------------------- shapes

def parse_shapes(text):
    """'NAME:key=value,...;NAME:...' -> [{'name':..., 'hosts':..., ...}]"""
    shapes = []
    for part in [p.strip() for p in text.split(';') if p.strip()]:
        name, _, spec = part.partition(':')
        s = {'name': name.strip(), 'hosts': 58, 'urls': 2000, 'dead': 0, 'slow': 0, 'throttle': 0,
             'reset': 0, 'nxdomain': 0, 'tls': 0.0, 'spread': 0.0, 'lat_min': 0, 'lat_max': 0, 'notfound': 0.0,
             'html': 0.0, 'redirect': 0.0, 'tohttps': 0.0}
        for kv in [x for x in spec.split(',') if x.strip()]:
            k, _, v = kv.partition('=')
            k = k.strip()
            if k not in SHAPE_KEYS:
                sys.exit('wan: shape %s: unknown key %r (keys: %s)' % (name, k, ', '.join(SHAPE_KEYS)))
            s[k] = float(v) if k in FLOAT_KEYS else int(v)
        special = s['dead'] + s['slow'] + s['throttle'] + s['reset'] + s['nxdomain']
        if s['hosts'] <= special:
            sys.exit('wan: shape %s: %d hosts leave no normal host after %d special ones' % (name, s['hosts'], special))
        shapes.append(s)
    return shapes


def address(i):
    """The i-th (0-based) bench address: 127.1.0.1, 127.1.0.2, ... skipping .0 and .255."""
    hi, lo = divmod(i, 254)
    mid_hi, mid = divmod(hi, 256)
    return '127.%d.%d.%d' % (1 + mid_hi, mid, lo + 1)


class Host:
    __slots__ = ('name', 'kind', 'addr', 'tls', 'urls', 'trips', 'chain', 'lat_ms')

    def __init__(self, name, kind, addr, tls):
        self.name, self.kind, self.addr, self.tls, self.urls = name, kind, addr, tls, 0
        # responses its URLs ask for (a redirect asks two), the longest chain of one URL,
        # and its own latency (None: the shape's --wan-latency or --wan-slow)
        self.trips, self.chain, self.lat_ms = 0, 0, None


def build_hosts(shape):
    counts = {'dead': shape['dead'], 'slow': shape['slow'], 'throttle': shape['throttle'],
              'reset': shape['reset'], 'gone': shape['nxdomain']}
    counts['h'] = shape['hosts'] - sum(counts.values())
    hosts = []
    for kind in KINDS:
        for k in range(1, counts[kind] + 1):
            hosts.append(Host('%s%d.%s' % (kind, k, DOMAIN), kind, address(len(hosts)), False))
    rng = random.Random('sdfetch-bench/wan/tls/%s' % shape['name'])
    order = list(range(len(hosts)))
    rng.shuffle(order)
    for i in order[:int(round(shape['tls'] * len(hosts)))]:
        hosts[i].tls = True
    if shape['lat_max'] > 0:
        # log-uniform between lat_min and lat_max: most servers near, a few far
        lo, hi = max(1, shape['lat_min']), max(shape['lat_min'], shape['lat_max'])
        rng = random.Random('sdfetch-bench/wan/latency/%s' % shape['name'])
        for h in hosts:
            if h.kind != 'slow':
                h.lat_ms = int(round(math.exp(rng.uniform(math.log(lo), math.log(hi)))))
    return hosts


def spread_counts(shape, hosts):
    """URLs per host (in host order): even (k mod H) without `spread`; with it, one URL
    each and the rest by a Zipf law of that exponent over a shuffled order (the heaviest
    names HTTPS ones when there are any, as CDNs are), so most names have one or two URLs
    and a few have hundreds."""
    urls, n_hosts = shape['urls'], len(hosts)
    if shape['spread'] <= 0:
        return [urls // n_hosts + (1 if i < urls % n_hosts else 0) for i in range(n_hosts)]
    counts = [1 if i < urls else 0 for i in range(n_hosts)]
    rest = max(0, urls - n_hosts)
    weights = [1.0 / (rank ** shape['spread']) for rank in range(1, n_hosts + 1)]
    total = sum(weights)
    order = list(range(n_hosts))
    random.Random('sdfetch-bench/wan/spread/%s' % shape['name']).shuffle(order)
    # the heaviest names are CDNs: HTTPS ones when the shape has HTTPS
    cdns = [i for i in order if hosts[i].kind == 'h' and hosts[i].tls][:10]
    order = cdns + [i for i in order if i not in set(cdns)]
    extra = [int(rest * w / total) for w in weights]
    for k in range(rest - sum(extra)):
        extra[k % n_hosts] += 1
    for rank, i in enumerate(order):
        counts[i] += extra[rank]
    return counts


URL_KINDS = ('img', 'notfound', 'html', 'redirect', 'tohttps')
FETCHABLE_URLS = ('img', 'redirect', 'tohttps')


def build_list(shape, hosts, files):
    """URL k serves corpus file k mod N; its path /img/uK-FILE makes every basename unique
    (curl, wget2 and aria2c name outputs after it).  Without `spread`, URL k goes to host
    k mod H, as before; with it, see spread_counts.  Some URLs are asked as another kind:
    /img/uK-missing.jpg (404), /page/uK-FILE (an HTML page served as 200),
    /moved/uK-FILE (302 to /img/uK-FILE) and, on an HTTPS name, http://NAME/s/uK-FILE (301
    to https://NAME/img/uK-FILE).  Shuffled.  Returns (url, host, file, kind)."""
    if shape['spread'] > 0:
        owners = [i for i, c in enumerate(spread_counts(shape, hosts)) for _ in range(c)]
        random.Random('sdfetch-bench/wan/owners/%s' % shape['name']).shuffle(owners)
    else:
        owners = [k % len(hosts) for k in range(shape['urls'])]
    rng = random.Random('sdfetch-bench/wan/kinds/%s' % shape['name'])
    urls = []
    for k in range(shape['urls']):
        h = hosts[owners[k]]
        h.urls += 1
        f = files[k % len(files)]
        x = rng.random()
        kind = 'img'
        for name in ('notfound', 'html', 'redirect', 'tohttps'):
            if x < shape[name]:
                kind = name
                break
            x -= shape[name]
        if kind == 'tohttps' and not h.tls:
            kind = 'redirect'
        if h.kind != 'h':
            kind = 'img'  # the special names' servers answer /img/ only
        scheme = 'https' if h.tls and kind != 'tohttps' else 'http'
        path = {'img': '/img/u%07d-%s', 'notfound': '/img/u%07d-missing-%s', 'html': '/page/u%07d-%s',
                'redirect': '/moved/u%07d-%s', 'tohttps': '/s/u%07d-%s'}[kind] % (k, f)
        trips = 2 if kind in ('redirect', 'tohttps') else 1
        h.trips += trips
        h.chain = max(h.chain, trips)
        urls.append(('%s://%s%s' % (scheme, h.name, path), h, f, kind))
    random.Random('sdfetch-bench/wan/list/%s' % shape['name']).shuffle(urls)
    return urls


# ---------------------------------------------------------------- lower bound

def lower_bound(shape, hosts, a, byte_term):
    """The least time any tool can take on this shape (seconds), and its terms.

    Every host is served on its own lanes, with no global cap:
      a normal host:      ceil(n / lanes) * latency
      a slow host:        ceil(n / lanes) * slow_latency
      a dead host:        one connect timeout (its other URLs then fail at once)
      the throttling host: every URL is first answered 429 after the latency, then served
                          after Retry-After: max(ceil(n / lanes) * latency + retry_after +
                          latency, ceil(2n / lanes) * latency)
      resetting and NXDOMAIN hosts: 0 (they fail at once)
    where n is the host's URL count and lanes is --per-host (6) over HTTP/1.1, or the
    HTTP/2 stream limit (100, one connection) over HTTPS; a shape with redirects counts
    each redirected URL's two responses (and at least two latencies), and a shape with
    lat_min/lat_max gives each host its own latency.  Connection set-up and TLS
    handshakes cost no latency here: the server adds its latency per response, not per
    round trip.  The bytes: the fetchable URLs from one host with no latency (curl
    --parallel at 32, HTTP/1.1 or HTTP/2 as the shape; best of two), the loopback cold rate
    on this machine.
      bound = max(max over hosts, byte term)
    """
    slow = a.slow_ms / 1000.0
    worst, which = 0.0, '-'
    for h in hosts:
        lanes = a.h2_streams if h.tls else a.per_host
        lat = (h.lat_ms if h.lat_ms is not None else a.latency_ms) / 1000.0
        n = h.urls
        if n == 0:
            continue
        if h.kind == 'h':
            # a redirected URL asks twice, one after the other
            t = max(math.ceil(h.trips / lanes), h.chain) * lat
        elif h.kind == 'slow':
            t = max(math.ceil(h.trips / lanes), h.chain) * slow
        elif h.kind == 'dead':
            t = a.connect_timeout
        elif h.kind == 'throttle':
            t = max(math.ceil(n / lanes) * lat + a.retry_after + lat, math.ceil(2 * n / lanes) * lat)
        else:
            t = 0.0
        if t > worst:
            worst, which = t, '%s (%s, %d URLs)' % (h.name, h.kind, n)
    bound = max(worst, byte_term)
    return bound, worst, which


# ---------------------------------------------------------------- servers

class Servers:
    """dnsmasq, nginx and the throttle backend of one shape, inside namespace `ns`; each
    writes its pid to STATE/*.pid so that wan-net.sh down can stop it on any exit."""

    def __init__(self, a):
        self.a = a
        self.state = a.state
        self.procs = []

    def ns(self, argv):
        return ['ip', 'netns', 'exec', self.a.netns] + argv

    def start(self, shape, hosts):
        a, st = self.a, self.state
        with open(os.path.join(st, 'hosts.wan'), 'w') as f:
            f.write('%s\t%s\n' % ('127.0.1.1', DIRECT))
            for h in hosts:
                if h.kind != 'gone':
                    f.write('%s\t%s\n' % (h.addr, h.name))
        os.chmod(os.path.join(st, 'hosts.wan'), 0o644)
        dead = [h.addr for h in hosts if h.kind == 'dead']
        reset = [h.addr for h in hosts if h.kind == 'reset']
        # Dead hosts: every SYN dropped (the client's connect times out).  Resetting hosts:
        # the connection is accepted, then the first segment carrying data (PSH: the request,
        # or a TLS ClientHello) is answered with a TCP reset.
        rules = ['flush ruleset', 'table inet wan {']
        for name, addrs in (('dead_hosts', dead), ('resetting_hosts', reset)):
            rules.append('  set %s { type ipv4_addr; %s}' % (name, 'elements = { %s } ' % ', '.join(addrs) if addrs else ''))
        rules += ['  chain input {', '    type filter hook input priority 0; policy accept;',
                  '    ip daddr @dead_hosts tcp flags & (syn | ack) == syn drop',
                  '    ip daddr @resetting_hosts tcp flags & psh == psh reject with tcp reset',
                  '  }', '}']
        with open(os.path.join(st, 'nft.conf'), 'w') as f:
            f.write('\n'.join(rules) + '\n')
        subprocess.run(self.ns(['nft', '-f', os.path.join(st, 'nft.conf')]), check=True)

        dns_log = open(os.path.join(st, 'dnsmasq.log'), 'a')
        p = subprocess.Popen(self.ns([
            'dnsmasq', '--keep-in-foreground', '--conf-file=/dev/null', '--no-resolv', '--no-hosts',
            '--addn-hosts=' + os.path.join(st, 'hosts.wan'), '--local=/%s/' % DOMAIN,
            '--listen-address=' + RESOLVER, '--bind-interfaces', '--port=53',
            '--pid-file=' + os.path.join(st, 'dnsmasq.pid'), '--user=nobody', '--group=nogroup',
            '--cache-size=10000', '--log-facility=' + os.path.join(st, 'dnsmasq.log')]),
            stdin=subprocess.DEVNULL, stdout=dns_log, stderr=dns_log, start_new_session=True)
        self.procs.append(('dnsmasq', p))
        sock = os.path.join(st, 'throttle.sock')
        if os.path.exists(sock):
            os.unlink(sock)
        p = subprocess.Popen(self.ns([sys.executable, os.path.join(a.here, 'wan-throttle.py'), sock, str(a.retry_after)]),
                             stdin=subprocess.DEVNULL, stdout=dns_log, stderr=dns_log, start_new_session=True)
        with open(os.path.join(st, 'throttle.pid'), 'w') as f:
            f.write('%d\n' % p.pid)
        self.procs.append(('throttle', p))
        self.throttle = p
        for _ in range(50):
            if os.path.exists(sock):
                break
            time.sleep(0.1)
        os.chmod(sock, 0o666)  # nginx's workers run as nobody

        self.write_nginx(hosts)
        conf = os.path.join(st, 'nginx.conf')
        subprocess.run(self.ns(['nginx', '-t', '-q', '-p', st, '-c', conf, '-e', os.path.join(st, 'nginx-error.log')]), check=True)
        subprocess.run(self.ns(['nginx', '-p', st, '-c', conf, '-e', os.path.join(st, 'nginx-error.log')]), check=True)
        ok = False
        for _ in range(50):
            r = subprocess.run(self.ns(['curl', '-s', '-o', '/dev/null', '-w', '%{http_code}', '--max-time', '2',
                                        'http://%s/ping' % DIRECT]), capture_output=True, text=True)
            if r.stdout == '204':
                ok = True
                break
            time.sleep(0.1)
        if not ok:
            sys.exit('wan: nginx or dnsmasq did not answer in the namespace; see %s' % st)

    def write_nginx(self, hosts):
        a, st = self.a, self.state
        nofile = 20000
        try:
            import resource
            hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
            nofile = min(hard if hard > 0 else 65536, 65536)
        except (ImportError, ValueError, OSError):
            pass
        cache = max(64, min(50000, nofile // 2 - 512))
        lat = '%.3f' % (a.latency_ms / 1000.0)
        slow = '%.3f' % (a.slow_ms / 1000.0)
        slow_names = ''.join('        %s %s;\n' % (h.name, slow) for h in hosts if h.kind == 'slow')
        slow_names += ''.join('        %s %.3f;\n' % (h.name, h.lat_ms / 1000.0) for h in hosts
                              if h.lat_ms is not None)
        throttle_names = ' '.join(h.name for h in hosts if h.kind == 'throttle') or 'throttle.invalid'
        root = a.www
        corpus = a.corpus
        user = 'user nobody nogroup;' if os.getuid() == 0 else ''
        tls = os.path.join(st, 'tls')
        listen = ('        listen 80%s;\n        listen 443 ssl http2%s;\n')
        text = '''# generated by Scripts/bench.d/wan.py for one shape of the wan case
load_module /usr/lib/nginx/modules/ngx_http_echo_module.so;
%(user)s
worker_processes 1;
worker_rlimit_nofile %(nofile)d;
pid %(st)s/nginx.pid;
error_log %(st)s/nginx-error.log warn;
events { worker_connections %(conns)d; multi_accept on; }
http {
    types { image/jpeg jpg; image/png png; image/gif gif; text/plain txt; }
    default_type application/octet-stream;
    log_format wan '$msec\\t$host\\t$status\\t$body_bytes_sent\\t$request_uri\\t$connection\\t$server_protocol';
    access_log %(st)s/access.log wan;
    client_body_temp_path %(st)s/tmp/body;
    proxy_temp_path %(st)s/tmp/proxy;
    fastcgi_temp_path %(st)s/tmp/fastcgi;
    uwsgi_temp_path %(st)s/tmp/uwsgi;
    scgi_temp_path %(st)s/tmp/scgi;
    server_tokens off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 65s;
    keepalive_requests 100000;
    http2_max_concurrent_streams %(streams)d;
    open_file_cache max=%(cache)d inactive=300s;
    open_file_cache_valid 300s;
    log_not_found off;
    ssl_certificate %(tls)s/server.pem;
    ssl_certificate_key %(tls)s/server.key;
    ssl_protocols TLSv1.2 TLSv1.3;
    ssl_session_cache shared:wan:50m;
    map_hash_max_size 65536;
    map_hash_bucket_size 128;
    # the latency of each response: slow hosts (and each name of a spread shape) listed,
    # every other name the default
    map $host $wan_delay {
        default %(lat)s;
%(slow_names)s    }
    upstream throttle_backend { server unix:%(st)s/throttle.sock; keepalive 16; }
    # every name without its own block: wait, then serve /img/uK-FILE as CORPUS/img/FILE
    server {
%(listen_default)s        server_name _;
        root %(root)s;
        location /img/ { echo_sleep $wan_delay; echo_exec @file; }
        location @file { rewrite ^/img/u[0-9]+-(.+)$ /%(corpus)s/img/$1 break; }
        # an HTML page served as 200, where an image was listed
        location /page/ {
            default_type text/html;
            echo_sleep $wan_delay;
            echo '<!doctype html><html><head><title>Not found</title></head><body>gone</body></html>';
        }
        # a redirect to another path of the same name, and one from http to https
        location /moved/ { echo_sleep $wan_delay; echo_exec @moved; }
        location @moved { rewrite ^/moved/(.+)$ /img/$1 redirect; }
        location /s/ { echo_sleep $wan_delay; echo_exec @tohttps; }
        location @tohttps { rewrite ^/s/(.+)$ https://$host/img/$1 permanent; }
    }
    # the throttling host: wait, then ask the backend (429 + Retry-After, or serve)
    server {
%(listen_named)s        server_name %(throttle_names)s;
        root %(root)s;
        location /img/ { echo_sleep $wan_delay; echo_exec @backend; }
        location @backend {
            proxy_pass http://throttle_backend;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
        location /_file/ { internal; rewrite ^/_file/img/u[0-9]+-(.+)$ /%(corpus)s/img/$1 break; }
    }
    # no latency: the shape's byte term, and the readiness probe
    server {
%(listen_named)s        server_name %(direct)s;
        root %(root)s;
        location = /ping { access_log off; return 204; }
        location /img/ { rewrite ^/img/u[0-9]+-(.+)$ /%(corpus)s/img/$1 break; }
    }
}
''' % {'user': user, 'nofile': nofile, 'st': st, 'conns': min(nofile - 512, 16384), 'streams': a.h2_streams,
            'cache': cache, 'tls': tls, 'lat': lat, 'slow_names': slow_names, 'root': root, 'corpus': corpus,
            'listen_default': listen % ((' default_server backlog=4096',) * 2), 'listen_named': listen % ('', ''),
            'throttle_names': throttle_names, 'direct': DIRECT}
        os.makedirs(os.path.join(st, 'tmp'), exist_ok=True)
        with open(os.path.join(st, 'nginx.conf'), 'w') as f:
            f.write(text)

    def reset_throttle(self):
        if self.throttle.poll() is None:
            self.throttle.send_signal(signal.SIGHUP)
            time.sleep(0.05)

    def cpu(self):
        """user+sys seconds of nginx's workers, dnsmasq and the throttle backend so far."""
        ticks = 0
        pids = []
        try:
            master = open(os.path.join(self.state, 'nginx.pid')).read().strip()
            pids += open('/proc/%s/task/%s/children' % (master, master)).read().split()
        except OSError:
            pass
        for _, p in self.procs:
            pids.append(str(p.pid))
        try:
            pids.append(open(os.path.join(self.state, 'dnsmasq.pid')).read().strip())
        except OSError:
            pass
        for pid in set(pids):
            try:
                fields = open('/proc/%s/stat' % pid).read().rsplit(')', 1)[1].split()
                ticks += int(fields[11]) + int(fields[12])
            except (OSError, IndexError, ValueError):
                pass
        return ticks / os.sysconf('SC_CLK_TCK')

    def stop(self):
        st = self.state
        try:
            pid = int(open(os.path.join(st, 'nginx.pid')).read().strip())
            os.kill(pid, signal.SIGQUIT)
            for _ in range(50):
                os.kill(pid, 0)
                time.sleep(0.1)
            os.kill(pid, signal.SIGTERM)
        except (OSError, ValueError):
            pass
        for _, p in self.procs:
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        self.procs = []
        for f in ('nginx.pid', 'dnsmasq.pid', 'throttle.pid'):
            try:
                os.unlink(os.path.join(st, f))
            except OSError:
                pass


def make_ca(tls):
    """A private CA and one wildcard certificate for *.wan.test (ECDSA P-256), made once."""
    if os.path.exists(os.path.join(tls, 'server.pem')):
        return os.path.join(tls, 'ca.pem')
    os.makedirs(tls, exist_ok=True)

    def run(*argv):
        subprocess.run(['openssl'] + list(argv), check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    ca_key, ca = os.path.join(tls, 'ca.key'), os.path.join(tls, 'ca.pem')
    run('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', ca_key,
        '-out', ca, '-days', '30', '-subj', '/CN=sdfetch bench wan CA',
        '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign')
    key, csr, pem = (os.path.join(tls, x) for x in ('server.key', 'server.csr', 'server.pem'))
    run('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', key,
        '-out', csr, '-subj', '/CN=*.%s' % DOMAIN)
    ext = os.path.join(tls, 'server.ext')
    with open(ext, 'w') as f:
        f.write('basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n'
                'subjectAltName=DNS:*.%s,DNS:%s\n' % (DOMAIN, DOMAIN))
    run('x509', '-req', '-in', csr, '-CA', ca, '-CAkey', ca_key, '-CAcreateserial', '-out', pem, '-days', '30',
        '-extfile', ext)
    return ca


# ---------------------------------------------------------------- tools

def tools_for(a, shape, ca):
    """(tool, settings shown in the table, command template, env) per cell.  {list} {out}
    {cache} are filled per run; the rest is fixed here."""
    j, ct = a.j, a.connect_timeout
    tls = ca is not None
    q = shlex.quote
    sd_ca = ' --cacert %s' % q(ca) if tls else ''
    curl_ca = ' --cacert %s' % q(ca) if tls else ''
    ca_opt = ' --ca-certificate=%s' % q(ca) if tls else ''
    curl_list = "sed 's/.*/url = \"&\"/' {list} | "
    out = []
    sd = q(a.sdfetch_bin)
    out.append(('sdfetch', 'defaults', sd + ' --cache-dir {cache} -o {out}' + sd_ca + ' {list}', {}))
    for extra in [x for x in a.sdfetch_tuned.split(';') if x.strip()]:
        extra = extra.replace('{j}', str(j)).strip()
        out.append(('sdfetch', extra, sd + ' --cache-dir {cache} -o {out} ' + extra + sd_ca + ' {list}', {}))
    if 'curl' in a.peers:
        # Over HTTP/1.1 --parallel-immediate: without it curl holds a host's next transfers
        # until its first connection is up (to multiplex on it), so the URLs of a dead host
        # time out one after another.  Over HTTP/2 that wait is what lets it multiplex.
        immediate = '' if tls else ' --parallel-immediate'
        out.append(('curl', '-L --parallel%s --parallel-max %d --connect-timeout %d' % (immediate, j, ct),
                    curl_list + 'curl -sS -L --fail --parallel%s --parallel-max %d --connect-timeout %d ' % (immediate, j, ct)
                    + '--remote-name-all --output-dir {out}' + curl_ca + ' -K -', {}))
        out.append(('curl', 'defaults: -L --parallel (50)',
                    curl_list + 'curl -L --parallel --remote-name-all --output-dir {out}' + curl_ca + ' -K -', {}))
    if 'aria2c' in a.peers:
        out.append(('aria2c', '-j %d --connect-timeout %d --timeout %d --max-tries 1' % (j, ct, ct),
                    'aria2c -q -i {list} -d {out} -j %d --connect-timeout %d --timeout %d --max-tries 1 ' % (j, ct, ct)
                    + '--file-allocation=none --auto-file-renaming=false --console-log-level=error '
                    + '--summary-interval=0 --download-result=hide' + ca_opt, {}))
        out.append(('aria2c', 'defaults (-j 5, 5 tries)', 'aria2c -i {list} -d {out}' + ca_opt, {}))
    if 'wget2' in a.peers:
        out.append(('wget2', '--max-threads %d --timeout %d --tries 1' % (j, ct),
                    'wget2 -q --no-config -i {list} -P {out} --max-threads %d --timeout %d --tries 1' % (j, ct)
                    + ca_opt, {}))
        out.append(('wget2', 'defaults (5 threads, 20 tries)', 'wget2 -i {list} -P {out}' + ca_opt, {}))
    if 'img2dataset' in a.peers and a.img2dataset:
        env = {'SSL_CERT_FILE': ca} if tls else {}
        base = q(a.img2dataset) + ' --url_list {list} --output_folder {out} --resize_mode no --disable_all_reencoding True'
        procs = 2
        threads = max(1, j // procs)
        # one shard per process: a process works through its shards one after another, and
        # every shard holding a dead host's URL waits one --timeout
        shard = max(1, math.ceil(shape['urls'] / procs))
        out.append(('img2dataset', '%d processes x %d threads, --timeout %d --retries 0, shards of %d' % (procs, threads, ct, shard),
                    base + ' --processes_count %d --thread_count %d --timeout %d --retries 0 --number_sample_per_shard %d'
                    % (procs, threads, ct, shard), env))
        out.append(('img2dataset', 'defaults (1 process x 256 threads, --timeout 10)', base, env))
    return out


# ---------------------------------------------------------------- runs

class Runner:
    def __init__(self, a, servers):
        self.a = a
        self.servers = servers
        self.jsonl = open(os.path.join(a.results, 'runs.jsonl'), 'a')

    def execute(self, cmd, tag, cap, env=None, stdout_path=None):
        a = self.a
        os.sync()
        time.sleep(0.3)
        self.servers.reset_throttle()
        log_pos = os.path.getsize(os.path.join(a.state, 'access.log'))
        cpu0 = self.servers.cpu()
        tfile = os.path.join(a.work, 'time.out')
        if os.path.exists(tfile):
            os.unlink(tfile)
        efile = os.path.join(a.work, 'stderr-%s.txt' % tag)
        home = os.path.join(a.work, 'home')
        shutil.rmtree(home, ignore_errors=True)
        os.makedirs(home)
        argv = ['ip', 'netns', 'exec', a.netns, a.time_bin, '-f', 'RESULT %e %M %U %S %x', '-o', tfile,
                'bash', '-c', cmd]
        e = dict(os.environ, HOME=home, **(env or {}))
        out = open(stdout_path, 'wb') if stdout_path else subprocess.DEVNULL
        with open(efile, 'wb') as err:
            t0 = time.monotonic()
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=e, cwd=a.work,
                                 start_new_session=True)
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
            timer = threading.Timer(cap, stop)
            timer.daemon = True  # a signal's exit must not wait for it
            timer.start()
            p.wait()
            wall = time.monotonic() - t0
            timer.cancel()
            CURRENT[0] = None
        if stdout_path:
            out.close()
        # img2dataset's worker processes may outlive a killed parent: nothing of the cell's
        # process group may run into the next cell.
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        rc, rss, cpu = p.returncode, None, None
        if os.path.exists(tfile):
            for line in open(tfile, errors='replace'):
                m = re.match(r'^RESULT ([\d.]+) (\d+) ([\d.]+) ([\d.]+) (-?\d+)$', line.strip())
                if m:
                    rss = int(m.group(2)) / 1024.0
                    cpu = float(m.group(3)) + float(m.group(4))
                    rc = int(m.group(5))
                elif 'terminated by signal' in line:
                    rc = 128 + int(line.split()[-1])
        time.sleep(0.2)
        server_cpu = self.servers.cpu() - cpu0
        requests, statuses = 0, collections.Counter()
        with open(os.path.join(a.state, 'access.log'), 'rb') as f:
            f.seek(log_pos)
            for raw in f:
                parts = raw.split(b'\t')
                if len(parts) > 2:
                    requests += 1
                    statuses[parts[2].decode('ascii', 'replace')] += 1
        tail = open(efile, 'rb').read()[-400:].decode('utf-8', 'replace').strip().splitlines()[-2:]
        return {'cmd': cmd, 'wall': wall, 'rc': rc, 'rss_mib': rss, 'cpu_s': cpu, 'capped': capped.is_set(),
                'cap_s': cap, 'server_cpu_s': server_cpu, 'requests': requests, 'status': dict(statuses),
                'stderr_tail': tail}


def sha(path):
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for chunk in iter(lambda: f.read(1 << 20), b''):
            h.update(chunk)
    return h.hexdigest()


def count_ok(out, expected):
    """URLs that succeeded: files anywhere under `out` whose bytes are a listed image,
    matched as a multiset against the fetchable URLs' images (img2dataset renames files)."""
    found = collections.Counter()
    for d, _, files in os.walk(out):
        for name in files:
            p = os.path.join(d, name)
            try:
                if os.path.getsize(p) > 0:
                    found[sha(p)] += 1
            except OSError:
                pass
    return sum(min(n, expected.get(h, 0)) for h, n in found.items())


def files_done(out, started):
    """When the cell's files were written, in seconds from its start: the 50th, 90th, 99th
    percentile and the last (each file's ctime, which the tools' own mtimes leave alone).
    A cell whose wall time runs well past its last file spent that time on failures."""
    times = sorted(os.stat(os.path.join(d, name)).st_ctime - started
                   for d, _, files in os.walk(out) for name in files)
    if not times:
        return []
    return [times[min(len(times) - 1, int(len(times) * q))] for q in (0.5, 0.9, 0.99)] + [times[-1]]


def sdfetch_statuses(path):
    counts = collections.Counter()
    try:
        with open(path, 'rb') as f:
            for line in f:
                counts[line.split(b'\t', 1)[0].decode('ascii', 'replace').strip()] += 1
    except OSError:
        pass
    return counts


# ---------------------------------------------------------------- one shape

def run_shape(a, shape, files, digests, servers, runner, ca_file):
    hosts = build_hosts(shape)
    urls = build_list(shape, hosts, files)
    lists = os.path.join(a.work, 'lists')
    os.makedirs(lists, exist_ok=True)
    lst = os.path.join(lists, '%s.txt' % shape['name'])
    with open(lst, 'w') as f:
        f.write(''.join(u + '\n' for u, _, _, _ in urls))
    fetchable = [(u, h, f) for u, h, f, kind in urls if h.kind in FETCHABLE and kind in FETCHABLE_URLS]
    expected = collections.Counter(digests[f] for _, _, f in fetchable)
    url_kinds = collections.Counter(kind for _, _, _, kind in urls)
    tls = shape['tls'] > 0
    ca = ca_file if tls else None
    kinds = collections.Counter(h.kind for h in hosts)
    with open(os.path.join(lists, '%s-hosts.tsv' % shape['name']), 'w') as f:
        f.write('name\tkind\taddress\tscheme\turls\n')
        for h in hosts:
            f.write('%s\t%s\t%s\t%s\t%d\n' % (h.name, h.kind, h.addr, 'https' if h.tls else 'http', h.urls))

    servers.start(shape, hosts)
    try:
        # the byte term: the same fetchable images from one host with no latency
        direct = os.path.join(lists, '%s-direct.txt' % shape['name'])
        with open(direct, 'w') as f:
            for u, h, fl in fetchable:
                path = re.sub(r'^(moved|s)/', 'img/', u.split('/', 3)[3])
                f.write('%s://%s/%s\n' % ('https' if h.tls else 'http', DIRECT, path))
        byte_runs = []
        for rep in range(2):
            out = os.path.join(a.work, 'out-direct')
            shutil.rmtree(out, ignore_errors=True)
            os.makedirs(out)
            cmd = ("sed 's/.*/url = \"&\"/' {list} | curl -sS --fail --parallel --parallel-max 32 "
                   "--remote-name-all --output-dir {out}" + (' --cacert %s' % shlex.quote(ca) if ca else '') + ' -K -')
            r = runner.execute(fill(cmd, list=direct, out=out), 'direct', 120)
            got = count_ok(out, expected)
            byte_runs.append(r['wall'])
            log('%s: byte term run %d: %.3f s, %d/%d files' % (shape['name'], rep + 1, r['wall'], got, len(fetchable)))
            shutil.rmtree(out, ignore_errors=True)
        byte_term = min(byte_runs)
        bound, host_term, which = lower_bound(shape, hosts, a, byte_term)
        cap = max(a.cap_min, a.cap_factor * bound)
        latency = ('%d-%d ms (log-uniform per name)' % (shape['lat_min'], shape['lat_max']) if shape['lat_max'] > 0
                   else '%d ms' % a.latency_ms)
        desc = ('%d names: %d at %s, %d slow at %d ms, %d blackholed, %d throttling (429, Retry-After %d s), '
                '%d resetting, %d NXDOMAIN; %d URLs (%d fetchable); %s' % (
                    len(hosts), kinds['h'], latency, kinds['slow'], a.slow_ms, kinds['dead'], kinds['throttle'],
                    a.retry_after, kinds['reset'], kinds['gone'], len(urls), len(fetchable),
                    'HTTPS with HTTP/2 on %d%% of the names' % round(100 * shape['tls']) if tls else 'HTTP/1.1'))
        if shape['spread'] > 0:
            per = sorted((h.urls for h in hosts), reverse=True)
            desc += ('; URLs per name Zipf %.1f: the top names %s, %d names with one or two' % (
                shape['spread'], '/'.join(str(n) for n in per[:3]), sum(1 for n in per if n <= 2)))
        others = ', '.join('%d %s' % (url_kinds[k], k) for k in URL_KINDS[1:] if url_kinds[k])
        if others:
            desc += '; URLs asked otherwise: ' + others
        log('%s: %s' % (shape['name'], desc))
        log('%s: lower bound %.2f s = max(hosts %.2f s [%s], bytes %.2f s); each cell capped at %.0f s' % (
            shape['name'], bound, host_term, which, byte_term, cap))
        info = {'shape': shape['name'], 'spec': shape, 'description': desc, 'bound': bound, 'host_term': host_term,
                'host_term_from': which, 'byte_term': byte_term, 'cap': cap, 'urls': len(urls),
                'fetchable': len(fetchable)}
        rows = []
        tools = tools_for(a, shape, ca)
        samples = {i: [] for i in range(len(tools))}
        for rep in range(1, a.runs + 1):
            for i, (tool, settings, tpl, env) in enumerate(tools):
                out = os.path.join(a.work, 'out')
                cache = os.path.join(a.work, 'cache')
                for d in (out, cache):
                    shutil.rmtree(d, ignore_errors=True)
                    os.makedirs(d)
                so = os.path.join(a.work, 'stdout.txt')
                started = time.time()
                r = runner.execute(fill(tpl, list=lst, out=out, cache=cache), re.sub(r'\W', '_', tool), cap,
                                   env=env, stdout_path=so)
                r['ok'] = count_ok(out, expected)
                r['files_done_s'] = files_done(out, started)
                if tool == 'sdfetch':
                    r['statuses'] = dict(sdfetch_statuses(so))
                r.update({'shape': shape['name'], 'tool': tool, 'settings': settings, 'rep': rep, 'ts': time.time(),
                          'bound': bound})
                runner.jsonl.write(json.dumps(r) + '\n')
                runner.jsonl.flush()
                samples[i].append(r)
                log('  %-10s %-12s %-58s %s %7.2fs (x%.2f) cpu %s ok %d/%d req %d rc %s files by %s' % (
                    shape['name'], tool, settings[:58], 'CAPPED' if r['capped'] else '      ', r['wall'],
                    r['wall'] / bound if bound else 0, '-' if r['cpu_s'] is None else '%.2f' % r['cpu_s'],
                    r['ok'], len(fetchable), r['requests'], r['rc'],
                    '/'.join('%.1f' % t for t in r['files_done_s']) + ' s (50/90/99/100%)' if r['files_done_s'] else '-'))
                for d in (out, cache):
                    shutil.rmtree(d, ignore_errors=True)
        for i, (tool, settings, tpl, env) in enumerate(tools):
            runs = samples[i]
            walls = sorted(x['wall'] for x in runs)
            med = walls[len(walls) // 2]
            mid = min(runs, key=lambda x: abs(x['wall'] - med))
            note = ''
            if tool == 'sdfetch':
                st = mid.get('statuses', {})
                note = ' '.join('%s=%d' % kv for kv in sorted(st.items(), key=lambda kv: -kv[1]))
            rows.append({'shape': shape['name'], 'tool': tool, 'settings': settings, 'command': tpl, 'runs': len(runs),
                         'wall': med, 'min': walls[0], 'max': walls[-1], 'capped': any(x['capped'] for x in runs),
                         'cap': cap, 'bound': bound, 'ratio': med / bound if bound else None,
                         'cpu': mid['cpu_s'], 'server_cpu': mid['server_cpu_s'], 'ok': mid['ok'],
                         'fetchable': len(fetchable), 'urls': len(urls), 'requests': mid['requests'],
                         'rc': sorted(set(x['rc'] for x in runs)), 'note': note})
        return info, rows
    finally:
        servers.stop()


# ---------------------------------------------------------------- table

def table(infos, rows, a):
    out = ['Settings: tuned peers at %d-way; latency %d ms, slow hosts %d ms per response, Retry-After %d s, '
           'connect timeout %d s; the bound with %d lanes per HTTP/1.1 host and %d HTTP/2 streams; cells capped '
           'at max(%g s, %g x the bound); %d timed run(s) per cell.\n' % (
               a.j, a.latency_ms, a.slow_ms, a.retry_after, a.connect_timeout, a.per_host, a.h2_streams, a.cap_min,
               a.cap_factor, a.runs)]
    for info in infos:
        s = info['shape']
        out.append('### %s\n' % s)
        out.append('%s.  \nLower bound **%.2f s** = max(hosts %.2f s [%s], bytes %.2f s); each cell capped at %.0f s.\n' % (
            info['description'], info['bound'], info['host_term'], info['host_term_from'], info['byte_term'], info['cap']))
        out.append('| tool | settings | wall s | / bound | CPU s | server CPU s | URLs ok / fetchable | requests | rc | notes |')
        out.append('|---|---|---|---|---|---|---|---|---|---|')
        for r in [x for x in rows if x['shape'] == s]:
            wall = ('> %.0f' % r['cap']) if r['capped'] else ('%.2f' % r['wall'] if r['runs'] == 1 else
                                                             '%.2f (%.2f–%.2f)' % (r['wall'], r['min'], r['max']))
            ratio = ('> %.1f' % (r['cap'] / r['bound'])) if r['capped'] else '%.2f' % r['ratio']
            out.append('| %s | %s | %s | %s | %s | %s | %d / %d | %d | %s | %s |' % (
                r['tool'], r['settings'].replace('|', '/'), wall, ratio,
                '-' if r['cpu'] is None else '%.2f' % r['cpu'], '%.2f' % r['server_cpu'], r['ok'], r['fetchable'],
                r['requests'], ','.join(str(x) for x in r['rc']), r['note'].replace('|', '/')))
        out.append('')
        out.extend(verdicts(info, [x for x in rows if x['shape'] == s], a))
        out.append('')
    return '\n'.join(out)


def verdicts(info, rows, a):
    """sdfetch with no options against the bound (1.25x) and against every peer cell."""
    sd = next((r for r in rows if r['tool'] == 'sdfetch' and r['settings'] == 'defaults'), None)
    if not sd:
        return []
    lines = []
    t = sd['cap'] if sd['capped'] else sd['wall']
    lines.append('- sdfetch with no options: %s%.2f s = %s%.2fx the bound (target <= 1.25x): %s; %d of %d fetchable URLs' % (
        '> ' if sd['capped'] else '', t, '> ' if sd['capped'] else '', t / info['bound'],
        'met' if not sd['capped'] and t <= 1.25 * info['bound'] else 'NOT met', sd['ok'], sd['fetchable']))
    # A peer counts as ahead only with at least as many URLs fetched: a fast run that
    # fails more URLs is listed apart.
    faster = [r for r in rows if r['tool'] != 'sdfetch' and not r['capped'] and r['wall'] <= t]
    ahead = [r for r in faster if r['ok'] >= sd['ok']]
    for r in sorted(ahead, key=lambda x: x['wall']):
        lines.append('- sdfetch with no options trails %s (%s): %.2f s against %.2f s (%.2fx), %d against %d URLs ok' % (
            r['tool'], r['settings'], t, r['wall'], t / r['wall'], sd['ok'], r['ok']))
    for r in sorted([r for r in faster if r not in ahead], key=lambda x: x['wall']):
        lines.append('- faster, with fewer URLs ok: %s (%s) %.2f s, %d against sdfetch\'s %d' % (
            r['tool'], r['settings'], r['wall'], r['ok'], sd['ok']))
    if not ahead:
        lines.append('- no peer cell fetched as many URLs in less time')
    return lines


# ---------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description='the wan case of Scripts/bench (run it through Scripts/bench)')
    ap.add_argument('--netns', required=True)
    ap.add_argument('--state', required=True, help="servers' state dir (pid files: wan-net.sh down stops them)")
    ap.add_argument('--www', required=True)
    ap.add_argument('--corpus', required=True)
    ap.add_argument('--work', required=True)
    ap.add_argument('--results', required=True)
    ap.add_argument('--tls-dir', required=True, help='the CA and the server certificate (made once, kept)')
    ap.add_argument('--shapes', default=DEFAULT_SHAPES)
    ap.add_argument('--big', type=int, default=0, help='also run ' + BIG_SHAPE)
    ap.add_argument('--web', type=int, default=0, help='also run ' + WEB_SHAPE)
    ap.add_argument('--runs', type=int, default=1)
    ap.add_argument('--j', type=int, default=256, help='the concurrency every tuned cell gets')
    ap.add_argument('--latency-ms', type=int, default=50)
    ap.add_argument('--slow-ms', type=int, default=2000)
    ap.add_argument('--retry-after', type=int, default=2)
    ap.add_argument('--connect-timeout', type=int, default=15, help="sdfetch's default; the peers' tuned setting")
    ap.add_argument('--per-host', type=int, default=6, help='lanes per HTTP/1.1 host in the bound')
    ap.add_argument('--h2-streams', type=int, default=100, help="streams per HTTP/2 connection: nginx's limit and the bound's")
    ap.add_argument('--cap-factor', type=float, default=2, help='a cell is stopped at max(cap-min, cap-factor x bound)')
    ap.add_argument('--cap-min', type=float, default=20)
    ap.add_argument('--peers', default='curl,aria2c,wget2,img2dataset')
    ap.add_argument('--img2dataset', default='', help='the img2dataset executable (in its venv); empty: left out')
    ap.add_argument('--sdfetch-bin', required=True)
    ap.add_argument('--sdfetch-tuned', default='-j {j} --per-host 6', help="';'-separated option sets, one sdfetch row each")
    ap.add_argument('--time-bin', default='/usr/bin/time')
    a = ap.parse_args()
    a.here = os.path.dirname(os.path.abspath(__file__))
    a.peers = [p for p in a.peers.split(',') if p]
    signal.signal(signal.SIGINT, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    for d in (a.work, a.results, a.state):
        os.makedirs(d, exist_ok=True)
    os.chmod(a.state, 0o755)
    LOGFILE[0] = open(os.path.join(a.results, 'progress.log'), 'a')
    shapes = parse_shapes(a.shapes + (';' + BIG_SHAPE if a.big else '') + (';' + WEB_SHAPE if a.web else ''))

    files = []
    with open(os.path.join(a.www, a.corpus, 'manifest.tsv')) as f:
        for line in f:
            if line.strip() and not line.startswith('#'):
                files.append(line.split('\t', 1)[0])
    # files are img/NNNNNN.ext; the URL carries the basename
    digests = {os.path.basename(p): sha(os.path.join(a.www, a.corpus, p)) for p in files}
    files = [os.path.basename(p) for p in files]
    ca = make_ca(a.tls_dir)
    shutil.copytree(a.tls_dir, os.path.join(a.state, 'tls'), dirs_exist_ok=True)

    servers = Servers(a)
    runner = Runner(a, servers)
    infos, rows = [], []
    for shape in shapes:
        info, shape_rows = run_shape(a, shape, files, digests, servers, runner, ca)
        infos.append(info)
        rows.extend(shape_rows)
        # written after every shape: an interrupted run keeps what it measured
        text = table(infos, rows, a)
        with open(os.path.join(a.results, 'table.md'), 'w') as f:
            f.write(text)
        with open(os.path.join(a.results, 'rows.json'), 'w') as f:
            json.dump({'shapes': infos, 'rows': rows}, f, indent=1)
    print(table(infos, rows, a))


if __name__ == '__main__':
    main()
