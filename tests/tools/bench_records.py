"""What the benches' StageRecords tests (test_bench06, test_bench07) share: running a chapter's bench.sh without a
GPU, with stand-ins for the tools it calls (nvidia-smi always), and reading which provenance records it left in
the chapter's results folder, where a planted "the timings' record" stands for the record of an earlier whole run."""
import os
import subprocess
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
NVIDIA_SMI = ('case "$*" in -L) echo "GPU 0: Stand-in (UUID: GPU-0)";; *compute_cap*) echo 9.0;; '
              '*name*) echo Stand-in;; esac')
PLANTED = "the timings' record\n"


def run_bench(bench, out, stages, stand_ins=None, **env):
    """bash BENCH OUT STAGE... from the repository root, ROUNDS=1, with PATH led by stand-ins: nvidia-smi (a
    Stand-in GPU), and every {name: bash body} of STAND_INS."""
    with tempfile.TemporaryDirectory() as bin_dir:
        for name, body in dict(stand_ins or {}, **{"nvidia-smi": NVIDIA_SMI}).items():
            with open(os.path.join(bin_dir, name), "w") as f:
                f.write("#!/bin/bash\n" + body + "\n")
            os.chmod(os.path.join(bin_dir, name), 0o755)
        env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ["PATH"], ROUNDS="1", **env)
        return subprocess.run(["bash", os.path.join(ROOT, bench), out] + list(stages), cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=600)


class Folder:
    """A chapter's results folder, made with the planted record of an earlier whole run in it."""

    def __init__(self, path):
        self.path = path
        os.makedirs(path)
        with open(os.path.join(path, "provenance.json"), "w") as f:
            f.write(PLANTED)

    def records(self):
        return sorted(f for f in os.listdir(self.path) if f.endswith("provenance.json"))

    def whole_record_kept(self):
        with open(os.path.join(self.path, "provenance.json")) as f:
            return f.read() == PLANTED
