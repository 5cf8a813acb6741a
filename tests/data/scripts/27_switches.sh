#!/bin/bash
#SBATCH -N 4
#SBATCH --gpus-per-node=8
#SBATCH --switches=1@30:00
#SBATCH -t 2-0
# expect: nodes_min=4 switches=1 switches_wait_s=1800 time_limit_s=172800
srun python train.py
