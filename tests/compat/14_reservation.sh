#!/bin/bash
# --reservation: the job runs inside it, on its nodes.
# slurm: scontrol create reservation r1 nodes=gpu0004; sbatch --reservation=r1: Reservation=r1 in scontrol show job
# expect: SLURM_JOB_NODELIST=dev3
# expect: Reservation=compat
#SBATCH -J compat-resv
#SBATCH --reservation=compat
echo "SLURM_JOB_NODELIST=$SLURM_JOB_NODELIST"
scontrol show job "$SLURM_JOB_ID" | grep -o 'Reservation=[^ ]*'
