# The remote reaper of a terminal command or an agent (see ssh_reaper.go):
# a child subreaper that runs argv[4:], and when the command ends or it is
# told to, kills its children round after round, reaping them, until none
# is left; then it exits as the command did. argv[3] is "t" for a terminal
# command, whose SIGTERM ends the tree at once, and "" for an agent, whose
# SIGTERM is passed on to the agent's process group (its polite stop) while
# SIGHUP ends the tree. It reports on fd 4 where that is open.
import os, sys, signal
def say(m):
    try:
        os.write(4, ("acphost: " + m + "\n").encode()); os.close(4)
    except OSError:
        pass
def kids():
    me, out = str(os.getpid()), []
    try:
        for t in os.listdir("/proc/self/task"):
            with open("/proc/self/task/" + t + "/children") as f:
                out += [int(p) for p in f.read().split()]
        return out
    except OSError:
        out = []
    for d in os.listdir("/proc"):
        try:
            with open("/proc/" + d + "/stat") as f:
                if d.isdigit() and f.read().rsplit(")", 1)[1].split()[1] == me:
                    out.append(int(d))
        except (OSError, IndexError):
            pass
    return out
def killall(*_):
    for p in kids():
        try:
            os.kill(p, 9)
        except OSError:
            pass
why = ""
try:
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(36, 1, 0, 0, 0) != 0:
        why = "prctl: " + os.strerror(ctypes.get_errno())
except Exception as e:
    why = "no prctl: %s" % e
# Python may have set LC_CTYPE for itself (PEP 538): the command gets the
# wrapper's, passed as argv[1] (1 if set) and argv[2].
if sys.argv[1]:
    os.environ["LC_CTYPE"] = sys.argv[2]
else:
    os.environ.pop("LC_CTYPE", None)
terminal = sys.argv[3] == "t"
argv = sys.argv[4:]
if why:
    say("uncontained: " + why + "; descendants that leave the command's session survive it")
    try:
        os.execvp(argv[0], argv)
    except OSError as e:
        sys.stderr.write("%s: %s\n" % (argv[0], e.strerror)); sys.exit(127)
pid, reaped = 0, False
def polite(*_):
    if pid and not reaped:
        try:
            os.killpg(pid, signal.SIGTERM)
        except OSError:
            pass
for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
    signal.signal(s, killall)
if not terminal:
    signal.signal(signal.SIGTERM, polite)
parent = os.getpid()
pid = os.fork()
if pid == 0:
    try:
        try:
            os.close(4)
        except OSError:
            pass
        os.setpgid(0, 0)
        libc.prctl(1, 9, 0, 0, 0)
        if os.getppid() != parent:
            os._exit(137)
        os.execvp(argv[0], argv)
    except OSError as e:
        sys.stderr.write("%s: %s\n" % (argv[0], e.strerror)); sys.stderr.flush()
        os._exit(127 if e.errno == 2 else 126)
say("contained")
st = None
while True:
    try:
        p, w = os.waitpid(-1, 0)
    except ChildProcessError:
        break
    if p == pid:
        st, reaped = w, True
    if st is not None:
        killall()
if os.WIFSIGNALED(st):
    os._exit(128 + os.WTERMSIG(st))
os._exit(os.WEXITSTATUS(st))
