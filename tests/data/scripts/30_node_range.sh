#!/bin/bash
#SBATCH -N 2-4
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-task=1
#SBATCH -t 6:00:00
# expect: nodes_min=2 nodes_max=4 ntasks_per_node=8 gpus_per_task=1
srun python elastic_train.py
