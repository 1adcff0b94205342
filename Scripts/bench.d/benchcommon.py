"""What run.py and wan.py share: the timestamped progress log, the command being measured
(stopped with its process group on SIGINT/SIGTERM) and the command templates' {name}
substitution. Python 3 stdlib only."""
import os
import shlex
import signal
import sys
import time

CURRENT = [None]  # Popen of the command being measured
LOGFILE = [None]  # progress.log in the results dir
LABEL = ['']      # 'wan ' in wan.py's lines
T0 = time.monotonic()


def log(msg):
    msg = '[%s%6.1fs] %s' % (LABEL[0], time.monotonic() - T0, msg)
    print(msg, file=sys.stderr, flush=True)
    if LOGFILE[0]:
        LOGFILE[0].write(msg + '\n')
        LOGFILE[0].flush()


def on_signal(signum, _frame):
    p = CURRENT[0]
    if p is not None and p.poll() is None:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    sys.exit(128 + signum)


def fill(template, **values):
    """Substitute {name} placeholders, shell-quoted."""
    out = template
    for k, v in values.items():
        out = out.replace('{%s}' % k, shlex.quote(str(v)))
    return out
