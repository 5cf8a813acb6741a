#!/bin/bash
#SBATCH -J watcher
#SBATCH -t 10
# expect: name=watcher time_limit_s=600
# Waits until none of my other jobs is pending, as many wrappers do.
while [ -n "$(squeue -h -u "$USER" -t PD -o %i | grep -v "^$SLURM_JOB_ID$")" ]; do
  sleep 30
done
squeue -h -o '%i %T %M' -u "$USER"
