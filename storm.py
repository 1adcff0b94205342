import os, subprocess, sys, time, signal
bin_ = sys.argv[1]
def replaced():
    return sum(1 for n in os.listdir('out') if n.endswith('.png') and os.stat('out/'+n).st_mtime != 1000000)
for r in range(12):
    for n in os.listdir('out'):
        if n.endswith('.png'): os.utime('out/'+n, (1000000, 1000000))
    p = subprocess.Popen([bin_, '--cache-dir', 'c', '-o', 'out', '-q', 'list.txt'], stdout=subprocess.DEVNULL)
    want = 1 + r % 18
    while replaced() < want and p.poll() is None: pass
    p.send_signal(signal.SIGKILL); p.wait()
left = [n for n in os.listdir('out') if n.startswith('.sdfetch')]
print(bin_, 'after 12 kills:', len(left), 'temporary names', [os.path.getsize('out/'+n) for n in left])
