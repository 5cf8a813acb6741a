#!/bin/bash
# -x: never on the excluded (flaky) nodes.
# slurm: sbatch -x gpu0002 -w gpu0001: ExcNodeList=gpu0002; -x all nodes: "Requested node configuration is not available"
# expect: SLURM_JOB_NODELIST=dev4
# expect: ExcNodeList=dev[1-3]
#SBATCH -J compat-exclude
#SBATCH -x dev[1-3]
#SBATCH --gpus-per-node=1
echo "SLURM_JOB_NODELIST=$SLURM_JOB_NODELIST"
scontrol show job "$SLURM_JOB_ID" | grep -o 'ExcNodeList=[^ ]*'
