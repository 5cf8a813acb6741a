#!/bin/bash
#SBATCH --gpus=4
#SBATCH --mem-per-gpu=80G
#SBATCH --cpus-per-task=32
#SBATCH -t 8:00:00
# expect: gpus=4 mem_per_gpu_mib=81920 mem_per_node_mib=0 cpus_per_task=32
python infer.py --batch-size 64
