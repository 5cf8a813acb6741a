#!/bin/bash
# --exclude with a file of flaky nodes, the daily practice on GPU clusters.
# slurm: sbatch -x ./nodes.txt: accepted, the listed nodes excluded
# expect: SLURM_JOB_NODELIST=dev2
#SBATCH -J compat-excludefile
#SBATCH --exclude=./flaky.txt
echo "SLURM_JOB_NODELIST=$SLURM_JOB_NODELIST"
