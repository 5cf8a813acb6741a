#!/bin/bash
# --hint: accepted values reach the job; nomultithread shows as T=1.
# slurm: --hint=nomultithread: SLURM_HINT=nomultithread, ReqB:S:C:T=0:0:*:1
# expect: SLURM_HINT=nomultithread
# expect: ReqB:S:C:T=0:0:*:1
#SBATCH -J compat-hint
#SBATCH --hint=nomultithread
echo "SLURM_HINT=$SLURM_HINT"
scontrol show job "$SLURM_JOB_ID" | grep -o 'ReqB:S:C:T=[^ ]*'
