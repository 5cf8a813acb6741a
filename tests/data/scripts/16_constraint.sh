#!/bin/bash
#SBATCH -C "h100&ib"
#SBATCH --gpus-per-node=8
#SBATCH -t 60
# expect: constraint=h100&ib gpus_per_node=8 time_limit_s=3600
srun hostname
