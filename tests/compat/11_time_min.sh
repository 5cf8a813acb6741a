#!/bin/bash
# --time-min: kept with the job (backfill may shorten the limit down to it; the
# core's test_job_options works that case by hand).
# slurm: -t 5 --time-min=2: TimeLimit=00:05:00 TimeMin=00:02:00
# expect: TimeMin=00:10:00
#SBATCH -J compat-timemin
#SBATCH --time-min=10
scontrol show job "$SLURM_JOB_ID" | grep -o 'TimeMin=[^ ]*'
