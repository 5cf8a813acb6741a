#!/usr/bin/env python3
"""Cuts the golden outputs out of the real Slurm 22.05 transcript.

Each golden file is the verbatim output of one command in
shared/slurm/results/cli-transcript.txt (between the "$ command" line and the
"[exit N]" line), so the formatter tests compare against what Slurm printed,
never against what our code produced. Run:
  tests/data/golden/extract.py /work/shared/slurm/results/cli-transcript.txt
"""
import os
import sys

WANTED = {  # golden file: the exact command line in the transcript (first match)
    "sinfo_idle.txt": "sinfo",
    "sinfo_N.txt": "sinfo -N -n gpu000[1-3]",
    "sinfo_s.txt": "sinfo -s",
    "sinfo_o.txt": "sinfo -o %P %a %l %D %t %G %N",
    "squeue_default.txt": "squeue",
    "squeue_l.txt": "squeue -l -j 10063,10127,10128,10129,10130",
    "squeue_start.txt": "squeue --start -j 10127",
    "squeue_o.txt": "squeue -o %.18i %.9P %.8j %.8u %.2t %.10M %.6D %R -j 10063,10127",
    "squeue_sort.txt": "squeue -t all -j 10131,10063,",
    "squeue_all.txt": "squeue -t all -j 10127,10132,10134,10128,10131",
    "squeue_timeout.txt": "squeue -t all -j 10133 -o %.8i %.8j %.2t %T %.10M %r",
    "sprio_l.txt": "sprio -l -j 10127",
    "scontrol_job_pending.txt": "scontrol show job 10127",
    "scontrol_job_failed.txt": "scontrol show job 10132",
    "scontrol_partition.txt": "scontrol show partition batch",
    "sacct_default.txt": "sacct -j 10127,10132,10134,10128,10133,10131,10063",
    "sacct_X_o.txt": "sacct -X -j 10127,10132,10134,10133 -o",
    "sshare_a.txt": "sshare -a",
}


def main():
    lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
    out_dir = os.path.dirname(os.path.abspath(__file__))
    seen = {}
    for name, cmd in WANTED.items():
        for i, line in enumerate(lines):
            if not line.startswith("$ "):
                continue
            got = line[2:]
            exact = got == cmd
            prefix = cmd.endswith((",", "-o")) and got.startswith(cmd)
            if (exact or prefix) and (name not in seen):
                if name == "sinfo_alloc.txt":
                    continue
                body = []
                for l in lines[i + 1:]:
                    if l.startswith("[exit "):
                        break
                    body.append(l)
                seen[name] = True
                # "sinfo" appears twice: first all idle, later all allocated.
                with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
                    f.write("\n".join(body) + "\n")
                break
        else:
            sys.exit("not found: " + cmd)
    # The second plain `sinfo` (every node busy).
    hits = [i for i, l in enumerate(lines) if l == "$ sinfo"]
    body = []
    for l in lines[hits[1] + 1:]:
        if l.startswith("[exit "):
            break
        body.append(l)
    with open(os.path.join(out_dir, "sinfo_alloc.txt"), "w", encoding="utf-8") as f:
        f.write("\n".join(body) + "\n")


if __name__ == "__main__":
    main()
