#!/bin/bash
#SBATCH -N 2
#SBATCH --gpus=h100:16
#SBATCH -t 10:00:00
# expect: nodes_min=2 gpus=16 gpu_type=h100
srun python train.py
