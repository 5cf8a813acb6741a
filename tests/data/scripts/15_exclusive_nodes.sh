#!/bin/bash
#SBATCH --exclusive
#SBATCH -N 2
#SBATCH --ntasks-per-node=8
#SBATCH --gpus-per-node=8
#SBATCH -t 3:00:00
# expect: exclusive=1 nodes_min=2 ntasks_per_node=8 gpus_per_node=8
srun --cpu-bind=cores ./nccl-tests/build/all_reduce_perf -b 8 -e 8G -f 2 -g 1
