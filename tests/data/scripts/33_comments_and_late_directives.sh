#!/bin/bash
# Lab template v3 -- do not edit above this line
#SBATCH --time=10 # ten minutes
#SBATCH --job-name="quoted name"

#SBATCH --cpus-per-task=2
module load cuda/12.4
#SBATCH --time=99:00:00
# expect: time_limit_s=600 name=quoted name cpus_per_task=2
nvidia-smi
