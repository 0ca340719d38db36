"""Starting a real `iapkit serve` on 127.0.0.1 for the benchmark scripts (imported by deploy-bench.py and
history-bench.py): the process is returned once `/health` answers, and its caller stops it by its process id."""
import subprocess
import sys
import time
import urllib.request


def start_serve(command, port):
    """Runs COMMAND (an `iapkit serve` invocation on PORT, possibly behind a launcher such as prlimit) and waits at
    most 10 s for its `/health`; exits the script with a message when it does not start."""
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).read()
            return process
        except OSError:
            if process.poll() is not None:
                sys.exit("iapkit serve did not start")
            time.sleep(0.05)
    process.kill()
    sys.exit("iapkit serve did not answer in 10 s")
