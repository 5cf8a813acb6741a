#!/bin/bash
# --open-mode=append: a checkpoint-and-requeue script's log grows across runs.
# slurm: -o envout.txt --open-mode=append: SLURM_OPEN_MODE=a, earlier runs' lines kept
# runs: 2
# expect: SLURM_OPEN_MODE=a
# expect: lines=2
#SBATCH -J compat-append
#SBATCH -o compat-append.log
#SBATCH --open-mode=append
echo "SLURM_OPEN_MODE=$SLURM_OPEN_MODE"
