#!/bin/bash
# --open-mode=truncate (Slurm's default): each run starts the file afresh.
# slurm: --open-mode=truncate accepted; --open-mode=t too (the first letter counts)
# runs: 2
# expect: SLURM_OPEN_MODE=t
# expect: lines=1
#SBATCH -J compat-truncate
#SBATCH -o compat-truncate.log
#SBATCH --open-mode=t
echo "SLURM_OPEN_MODE=$SLURM_OPEN_MODE"
